package brightbox

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// The nodes of every load balancer of the cluster are in one server
// group, and one firewall policy on that group opens every load
// balancer's node ports, with one rule per load balancer described with
// its name. The existing CCM makes a group and a policy per load
// balancer, each group holding every node; but a server embeds its
// groups in the list of servers (5,000 nodes in 1,000 groups: 5 million
// embedded groups in each instance list), and a node joining cost one
// add_servers per group. One group costs one add_servers for all the
// load balancers. The API has no load balancer that targets a group, so
// each load balancer still lists its nodes (one update each).
//
// One group serves them all because the service controller gives every
// load balancer the same nodes (k8s.io/cloud-provider's stable node set:
// Nodes not being deleted, not excluded by label, not tainted for
// deletion by the autoscaler). While a node change reaches the load
// balancers one by one, the group holds the nodes of the latest sync: a
// node leaving is closed to the load balancers not synced yet a little
// early, a node joining opened to them a little before they use it.
//
// A group has at most one policy; a policy holds many rules. The group
// and the policy are named sharedName, ccmkit-lb-nodes.<cluster>, which
// no load balancer's name (<service>.<namespace>.<cluster>) can be: what
// comes before .<cluster> has no dot. They are made by the first
// load balancer's sync (the policy first, then the group, then the policy
// applied to it) and deleted when the last rule goes (the group first:
// a policy left alone is found by name in the list of policies, which is
// small, where a group would need the list of groups, which embeds every
// group's servers). A load balancer whose own group and policy (the
// existing CCM's, named as it) exist is moved to the shared ones by its
// next sync: its rule is added to the shared policy, then its own policy
// and group are deleted.

// sharedPrefix starts the name of the shared server group and firewall
// policy.
const sharedPrefix = "ccmkit-lb-nodes."

// sharedName is the name of the cluster's shared server group and
// firewall policy.
func sharedName(clusterName string) string { return sharedPrefix + clusterName }

// sharedFirewall is what the driver knows of the shared group and policy:
// read at most once per ttl for the syncs of every load balancer, and
// kept up to date with the driver's own writes, so that a node joining
// costs one read of each and one add_servers for all the load balancers,
// and a sync with nothing to change no read. A failed write forgets it,
// so the next sync reads again. mu serializes the syncs' changes to
// them: they are shared.
type sharedFirewall struct {
	mu  sync.Mutex
	ttl time.Duration // negative: read on every sync
	now func() time.Time

	known  bool
	readAt time.Time
	// name is the shared name the rest is about.
	name string
	// policyID and groupID are the shared policy's and group's IDs, ""
	// when there is none; applied: the policy is applied to the group.
	policyID, groupID string
	applied           bool
	// servers are the group's servers, sorted.
	servers []string
	// rules are the policy's rules.
	rules []brightbox.FirewallRule
	// own are the names of the other firewall policies: those of load
	// balancers not moved to the shared group yet (the existing CCM's).
	own map[string]bool
}

// forget makes the next sync read the group and the policy again.
func (s *sharedFirewall) forget() { s.known = false }

// fresh reports whether what is known of name's group and policy may serve.
func (s *sharedFirewall) fresh(name string) bool {
	return s.known && s.name == name && s.ttl >= 0 && s.now().Sub(s.readAt) < s.ttl
}

// loadShared reads the shared policy and group called name, unless what
// the driver knows of them is fresh. Called with d.shared.mu held.
func (d *lbDriver) loadShared(ctx context.Context, name string) error {
	s := &d.shared
	if s.fresh(name) {
		return nil
	}
	policies, err := d.client.FirewallPolicies(cloudapi.WithOperation(ctx, "firewall_policies.list"))
	if err != nil {
		s.forget()
		return fmt.Errorf("listing firewall policies: %w", err)
	}
	return d.loadSharedFrom(ctx, name, policies)
}

// loadSharedFrom is loadShared with the policies just listed.
func (d *lbDriver) loadSharedFrom(ctx context.Context, name string, policies []brightbox.FirewallPolicy) error {
	s := &d.shared
	lastGroup := ""
	if s.name == name {
		lastGroup = s.groupID
	}
	s.forget()
	fp, own, err := sharedPolicy(policies, name)
	if err != nil {
		return err
	}
	next := sharedFirewall{name: name, own: own}
	if fp != nil {
		next.policyID, next.rules = fp.ID, slices.Clone(fp.Rules)
		g, applied, err := d.sharedGroupOf(ctx, name, fp, lastGroup)
		if err != nil {
			return err
		}
		if g != nil {
			next.groupID, next.applied, next.servers = g.ID, applied, sortedIDs(g.Servers)
		}
	}
	s.known, s.readAt = true, s.now()
	s.name, s.policyID, s.groupID, s.applied = next.name, next.policyID, next.groupID, next.applied
	s.servers, s.rules, s.own = next.servers, next.rules, next.own
	return nil
}

// sharedPolicy returns, among policies, the one called name (the one
// applied to a group if two are), nil if none is, and the names of the
// others but the account's default.
func sharedPolicy(policies []brightbox.FirewallPolicy, name string) (*brightbox.FirewallPolicy, map[string]bool, error) {
	var fp *brightbox.FirewallPolicy
	own := map[string]bool{}
	for i := range policies {
		p := &policies[i]
		switch {
		case p.ID == "":
			return nil, nil, fmt.Errorf("listing firewall policies: malformed response: a policy without ID")
		case p.Name == name:
			for _, r := range p.Rules {
				if r.ID == "" {
					return nil, nil, fmt.Errorf("listing firewall policies: malformed response: policy %s has a rule without ID", p.ID)
				}
			}
			if fp == nil || fp.ServerGroup == nil && p.ServerGroup != nil {
				fp = p
			}
		case p.Name != "" && !p.Default:
			own[p.Name] = true
		}
	}
	return fp, own, nil
}

// sharedGroupOf returns the shared group called name, nil when there is
// none, and whether the shared policy fp is applied to it. The group is
// found through the policy, else by the ID the driver knew (lastGroup);
// only a policy applied to no group (a sync stopped between creating the
// group and applying the policy to it) lists the server groups, a list
// that embeds every group's servers: a rare case, once.
func (d *lbDriver) sharedGroupOf(ctx context.Context, name string, fp *brightbox.FirewallPolicy, lastGroup string) (*brightbox.ServerGroup, bool, error) {
	if fp.ServerGroup != nil && fp.ServerGroup.ID != "" {
		g, err := d.serverGroupByID(ctx, fp.ServerGroup.ID, name)
		return g, g != nil, err
	}
	if lastGroup != "" {
		g, err := d.serverGroupByID(ctx, lastGroup, name)
		if g != nil || err != nil {
			return g, false, err
		}
	}
	groups, err := d.client.ServerGroups(cloudapi.WithOperation(ctx, "server_groups.list"))
	if err != nil {
		return nil, false, fmt.Errorf("listing server groups: %w", err)
	}
	for i := range groups {
		if groups[i].Name == name && groups[i].ID != "" {
			return &groups[i], false, nil
		}
	}
	return nil, false, nil
}

// serverGroupByID returns the server group id if it is called name; nil
// when the API says it is gone, or it is called otherwise.
func (d *lbDriver) serverGroupByID(ctx context.Context, id, name string) (*brightbox.ServerGroup, error) {
	g, err := one(ctx, "server_groups.get", func(ctx context.Context) (*brightbox.ServerGroup, error) {
		return d.client.ServerGroup(ctx, id)
	})
	switch {
	case isNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting server group %s: %w", id, err)
	case g == nil || g.ID != id:
		return nil, fmt.Errorf("getting server group %s: malformed response: no such group in the answer", id)
	case g.Name != name:
		return nil, nil
	}
	return g, nil
}

// sortedIDs returns the sorted IDs of servers.
func sortedIDs(servers []brightbox.Server) []string {
	ids := nodeIDs(servers)
	slices.Sort(ids)
	return ids
}
