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
// joining cost minutes. The IDs a list or a create shows are remembered
// by name (a few bytes each); a sync then makes one small GET, and lists
// only for a name it has not seen, or whose object is gone or renamed.

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

// serverGroupNamed returns the server group called name, nil when there is
// none.
func (d *lbDriver) serverGroupNamed(ctx context.Context, name string) (*brightbox.ServerGroup, error) {
	if id, ok := d.groups.get(name); ok {
		g, err := one(ctx, "server_groups.get", func(ctx context.Context) (*brightbox.ServerGroup, error) {
			return d.client.ServerGroup(ctx, id)
		})
		switch {
		case err == nil && g != nil && g.ID == id && g.Name == name:
			return g, nil
		case err != nil && !isNotFound(err):
			return nil, fmt.Errorf("getting server group %s: %w", id, err)
		}
		d.groups.forget(name) // gone or renamed: look again
	}
	groups, err := shared(d, "server_groups", func() ([]brightbox.ServerGroup, error) {
		return d.client.ServerGroups(cloudapi.WithOperation(ctx, "server_groups.list"))
	})
	if err != nil {
		return nil, fmt.Errorf("listing server groups: %w", err)
	}
	names, ids := make([]string, len(groups)), make([]string, len(groups))
	var found *brightbox.ServerGroup
	for i := range groups {
		names[i], ids[i] = groups[i].Name, groups[i].ID
		if found == nil && groups[i].Name == name {
			g := groups[i] // the list is shared: a copy
			found = &g
		}
	}
	d.groups.fill(names, ids)
	return found, nil
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
