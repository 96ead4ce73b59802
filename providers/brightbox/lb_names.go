package brightbox

import (
	"context"
	"fmt"
	"sync"

	brightbox "github.com/brightbox/gobrightbox/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// Server groups and firewall policies are found by name, as the existing
// CCM names them, but a sync reads its own by ID. A list of server groups
// holds every group's servers: at 200 load balancers over 1,000 nodes one
// list is 200,000 server entries, and listing on each sync made a node
// joining cost minutes, and each create or delete hundreds of MiB. So a
// group is never listed but in one rare case (serverGroupOf): its ID is
// remembered by name (a few bytes each), or read from its firewall policy,
// which is made before the group and applied to it, and whose list is
// small. Policies are listed only for a name not seen yet, or whose policy
// is gone or renamed.

// nameIndex maps names to IDs; its zero value is ready.
type nameIndex struct {
	mu  sync.Mutex
	ids map[string]string
}

func (x *nameIndex) get(name string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.ids[name]
	return id, ok
}

func (x *nameIndex) set(name, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ids == nil {
		x.ids = map[string]string{}
	}
	x.ids[name] = id
}

func (x *nameIndex) forget(name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.ids, name)
}

// fill remembers the first ID listed for each name.
func (x *nameIndex) fill(names, ids []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ids == nil {
		x.ids = map[string]string{}
	}
	seen := map[string]bool{}
	for i, name := range names {
		if name != "" && !seen[name] {
			seen[name] = true
			x.ids[name] = ids[i]
		}
	}
}

// serverGroupOf returns the server group called name, nil when there is
// none. fp is the firewall policy called name, which this sync created
// when fresh. A list of server groups is the costly read (see above), so
// the group is found by the ID known for name, else through the policy
// (the policy is applied to its group); only a policy applied to no group
// of that name (a sync stopped between creating the policy and applying
// it) makes a list. A fresh policy has no group yet.
func (d *lbDriver) serverGroupOf(ctx context.Context, name string, fp *brightbox.FirewallPolicy, fresh bool) (*brightbox.ServerGroup, error) {
	if id, ok := d.groups.get(name); ok {
		g, err := d.serverGroupByID(ctx, id, name)
		if g != nil || err != nil {
			return g, err
		}
		d.groups.forget(name) // gone or renamed: look again
	}
	if fp.ServerGroup != nil && fp.ServerGroup.ID != "" {
		g, err := d.serverGroupByID(ctx, fp.ServerGroup.ID, name)
		if g != nil {
			d.groups.set(name, g.ID)
		}
		if g != nil || err != nil {
			return g, err
		}
	}
	if fresh {
		return nil, nil
	}
	groups, err := shared(d, "server_groups", func() ([]brightbox.ServerGroup, error) {
		return d.client.ServerGroups(cloudapi.WithOperation(ctx, "server_groups.list"))
	})
	if err != nil {
		return nil, fmt.Errorf("listing server groups: %w", err)
	}
	for i := range groups {
		if groups[i].Name == name && groups[i].ID != "" {
			g := groups[i] // the list is shared: a copy
			d.groups.set(name, g.ID)
			return &g, nil
		}
	}
	return nil, nil
}

// serverGroupByID returns the server group id if it is called name; nil
// when it is gone or called otherwise.
func (d *lbDriver) serverGroupByID(ctx context.Context, id, name string) (*brightbox.ServerGroup, error) {
	g, err := one(ctx, "server_groups.get", func(ctx context.Context) (*brightbox.ServerGroup, error) {
		return d.client.ServerGroup(ctx, id)
	})
	switch {
	case isNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting server group %s: %w", id, err)
	case g == nil || g.ID != id || g.Name != name:
		return nil, nil
	}
	return g, nil
}

// firewallPolicyNamed returns the firewall policy called name, nil when
// there is none.
func (d *lbDriver) firewallPolicyNamed(ctx context.Context, name string) (*brightbox.FirewallPolicy, error) {
	if id, ok := d.policies.get(name); ok {
		fp, err := one(ctx, "firewall_policies.get", func(ctx context.Context) (*brightbox.FirewallPolicy, error) {
			return d.client.FirewallPolicy(ctx, id)
		})
		switch {
		case err == nil && fp != nil && fp.ID == id && fp.Name == name:
			return fp, nil
		case err != nil && !isNotFound(err):
			return nil, fmt.Errorf("getting firewall policy %s: %w", id, err)
		}
		d.policies.forget(name)
	}
	policies, err := shared(d, "firewall_policies", func() ([]brightbox.FirewallPolicy, error) {
		return d.client.FirewallPolicies(cloudapi.WithOperation(ctx, "firewall_policies.list"))
	})
	if err != nil {
		return nil, fmt.Errorf("listing firewall policies: %w", err)
	}
	names, ids := make([]string, len(policies)), make([]string, len(policies))
	var found *brightbox.FirewallPolicy
	for i := range policies {
		names[i], ids[i] = policies[i].Name, policies[i].ID
		if found == nil && policies[i].Name == name {
			fp := policies[i] // the list is shared: a copy
			found = &fp
		}
	}
	d.policies.fill(names, ids)
	return found, nil
}

// shared runs list once for all the syncs that miss at the same time (when
// many Services are created at once, say), so they share one list instead
// of each decoding its own. Joining a list already under way is safe: the
// only group or policy a sync looks for is its Service's, which the
// per-Service lock lets no one else create meanwhile. The result is shared:
// callers only read it.
func shared[T any](d *lbDriver, key string, list func() ([]T, error)) ([]T, error) {
	v, err, _ := d.lists.Do(key, func() (any, error) { return list() })
	if err != nil {
		return nil, err
	}
	out, _ := v.([]T)
	return out, nil
}
