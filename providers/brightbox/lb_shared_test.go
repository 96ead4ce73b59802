package brightbox_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestSharedServerGroup: the load balancers share one server group
// holding their nodes, and one firewall policy on it with a rule per
// load balancer. A node joining costs one add_servers for all of them
// and an update of each load balancer's nodes (the API has no load
// balancer that targets a group), with no read of the group or the
// policy; a server is in one group of the CCM's however many load
// balancers there are (the list of servers embeds each one's groups).
// The last load balancer deleted takes the group and the policy with it.
func TestSharedServerGroup(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svcs := make([]*corev1.Service, 3)
	for i := range svcs {
		svcs[i] = f.Service(t, fmt.Sprintf("web-%d", i), nil, func(s *corev1.Service) {
			for j := range s.Spec.Ports {
				s.Spec.Ports[j].NodePort += int32(10 * i)
			}
		})
		f.EnsureReady(t, svcs[i])
	}
	group := onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName)
	policy := onlyNamed(t, f.sim.FirewallPolicies(), sharedGroup, policyName)
	if policy.ServerGroup != group.ID {
		t.Fatalf("the shared policy is applied to %q, want the shared group %s", policy.ServerGroup, group.ID)
	}
	rules := map[string]string{}
	for _, r := range ruleOf(f.sim, policy.ID) {
		rules[r.Description] = r.DestinationPort
	}
	want := map[string]string{}
	for i := range svcs {
		want[fmt.Sprintf("web-%d.default.%s", i, clusterName)] = fmt.Sprintf("%d,%d", 30080+10*i, 30081+10*i)
	}
	if !maps.Equal(rules, want) {
		t.Errorf("rules of the shared policy (description: ports) = %v, want %v", rules, want)
	}

	f.AddNodes("node-c")
	before := f.sim.Stats()
	for _, svc := range svcs {
		if err := f.Update(t, svc); err != nil {
			t.Fatal(err)
		}
	}
	got := csitest.DiffStats(before, f.sim.Stats())
	wantCalls := map[string]int{
		"GET /1.0/load_balancers/{id}":             3,
		"PUT /1.0/load_balancers/{id}":             3,
		"POST /1.0/server_groups/{id}/add_servers": 1,
	}
	if !maps.Equal(got, wantCalls) {
		t.Errorf("a node joining 3 load balancers made %v, want %v", got, wantCalls)
	}
	servers := serverIDsOf(f.Nodes)
	if g := onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName); !slices.Equal(servers, slices.Sorted(slices.Values(g.Servers))) {
		t.Errorf("shared server group = %v, want %v", g.Servers, servers)
	}
	for _, g := range f.sim.ServerGroups() {
		if !g.Default && g.Name != sharedGroup {
			t.Errorf("server group %s (%s) besides the shared one", g.ID, g.Name)
		}
	}

	// The first two go: their rules only, from what the driver knows of
	// the shared policy (no list of policies, each of which would hold a
	// rule per load balancer).
	before = f.sim.Stats()
	for _, svc := range svcs[:2] {
		f.DeleteDone(t, f.Fresh(t, svc))
	}
	if n := csitest.DiffStats(before, f.sim.Stats())["GET /1.0/firewall_policies"]; n != 0 {
		t.Errorf("deleting two of three load balancers listed the firewall policies %d times, want 0", n)
	}
	if rules := ruleOf(f.sim, onlyNamed(t, f.sim.FirewallPolicies(), sharedGroup, policyName).ID); len(rules) != 1 || rules[0].Description != "web-2.default."+clusterName {
		t.Errorf("after two of three load balancers went, the shared policy's rules = %+v, want web-2's alone", rules)
	}
	onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName)
	// The last one out reads the policy again (one list) before deleting
	// the group and the policy.
	before = f.sim.Stats()
	f.DeleteDone(t, f.Fresh(t, svcs[2]))
	checkNoneLeft(t, f.sim)
	if n := csitest.DiffStats(before, f.sim.Stats())["GET /1.0/firewall_policies"]; n != 1 {
		t.Errorf("deleting the last load balancer listed the firewall policies %d times, want 1", n)
	}
	if n := f.sim.Stats()["GET /1.0/server_groups"]; n != 0 {
		t.Errorf("server groups listed %d times, want 0", n)
	}
}

func onlyNamed[T any](t *testing.T, items []T, name string, nameOf func(T) string) T {
	t.Helper()
	found := named(items, name, nameOf)
	if len(found) != 1 {
		t.Fatalf("%d named %q, want 1: %+v", len(found), name, found)
	}
	return found[0]
}

// TestSharedServerGroupReadEachSync: with the cache off
// (--load-balancer-cache-ttl negative) a sync reads the shared policy
// (one list, small) and group (by ID), and still writes nothing when
// nothing changed.
func TestSharedServerGroupReadEachSync(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{CacheTTL: -1})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	before := f.sim.Stats()
	if n := f.WritesDuring(func() {
		if err := f.Update(t, svc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a sync with nothing changed made %d writes", n)
	}
	got := csitest.DiffStats(before, f.sim.Stats())
	want := map[string]int{"GET /1.0/load_balancers/{id}": 1, "GET /1.0/firewall_policies": 1, "GET /1.0/server_groups/{id}": 1}
	if !maps.Equal(got, want) {
		t.Errorf("a sync with nothing changed made %v, want %v", got, want)
	}
}

// TestSharedServerGroupChangedElsewhere: a server deleted leaves the
// shared group at once, behind what the driver knows of it. The sync
// that takes its Node out finds the group changed (the API refuses to
// remove a server it does not hold), reads it again and succeeds with
// no write and no Warning.
func TestSharedServerGroupChangedElsewhere(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	f.AddNodes("node-c")
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	deleted := strings.TrimPrefix(f.Nodes[2].Spec.ProviderID, "brightbox://")
	f.sim.DeleteServer(deleted)
	f.Nodes = f.Nodes[:2]
	if err := f.Update(t, svc); err != nil {
		t.Fatalf("UpdateLoadBalancer after a server left the group: %v", err)
	}
	servers := serverIDsOf(f.Nodes)
	if g := onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName); !slices.Equal(servers, slices.Sorted(slices.Values(g.Servers))) {
		t.Errorf("shared server group = %v, want %v", g.Servers, servers)
	}
	if ev := f.Drain(); slices.ContainsFunc(ev, func(e string) bool { return strings.HasPrefix(e, "Warning") }) {
		t.Errorf("Warning Events: %v", ev)
	}
}

// TestServerGroupsNeverListed: a list of server groups embeds every
// group's servers, so creating, syncing and deleting load balancers never
// lists them: the shared group is found through its firewall policy.
func TestServerGroupsNeverListed(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{CacheTTL: -1})
	svcs := make([]*corev1.Service, 3)
	for i := range svcs {
		svc := f.Service(t, fmt.Sprintf("web-%d", i), nil)
		svcs[i] = svc
		f.EnsureReady(t, svc)
		f.AddNodes(fmt.Sprintf("node-%d", i))
		if err := f.Update(t, svc); err != nil {
			t.Fatal(err)
		}
	}
	for _, svc := range svcs {
		f.DeleteDone(t, f.Fresh(t, svc))
	}
	if n := f.sim.Stats()["GET /1.0/server_groups"]; n != 0 {
		t.Errorf("server groups listed %d times, want 0", n)
	}
	checkNoneLeft(t, f.sim)
}

// TestGroupOfAPolicyLeftUnapplied: a sync stopped after creating the
// shared firewall policy and server group, before applying one to the
// other. The next sync finds that group (by the one list this case
// costs) and applies the policy to it, making no second group; the
// delete removes both.
func TestGroupOfAPolicyLeftUnapplied(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	group := f.sim.AddServerGroup(gbsim.ServerGroup{Name: sharedGroup})
	f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: sharedGroup})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	if g := onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName); g.ID != group.ID || len(g.Servers) != 2 {
		t.Fatalf("shared server group = %+v; want %s, holding the two nodes", g, group.ID)
	}
	if p := onlyNamed(t, f.sim.FirewallPolicies(), sharedGroup, policyName); p.ServerGroup != group.ID {
		t.Errorf("shared firewall policy = %+v; want it applied to %s", p, group.ID)
	}
	if n := f.sim.Stats()["GET /1.0/server_groups"]; n != 1 {
		t.Errorf("server groups listed %d times, want 1", n)
	}
	f.DeleteDone(t, svc)
	checkNoneLeft(t, f.sim)
}

// checkNoneLeft fails when the cloud holds a server group or firewall
// policy other than the account's defaults.
func checkNoneLeft(t *testing.T, sim *gbsim.Server) {
	t.Helper()
	if groups := slices.DeleteFunc(sim.ServerGroups(), func(g gbsim.ServerGroup) bool { return g.Default }); len(groups) != 0 {
		t.Errorf("server groups left: %+v", groups)
	}
	if policies := slices.DeleteFunc(sim.FirewallPolicies(), func(p gbsim.FirewallPolicy) bool { return p.Default }); len(policies) != 0 {
		t.Errorf("firewall policies left: %+v", policies)
	}
}

// TestSharedPolicyKeptForARuleMadeElsewhere: the shared group and policy
// go with the last load balancer as the cloud shows them, not as the
// driver knew them. A rule another CCM (the leader before this one) added
// after this one read the policy keeps them, with that rule.
func TestSharedPolicyKeptForARuleMadeElsewhere(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{NewProvider: func() framework.Provider { return brightbox.New() }})
	web := f.Service(t, "web", nil)
	f.EnsureReady(t, web)
	first := f.LB
	f.LB = f.Start(t)
	api := f.Service(t, "api", nil)
	f.EnsureReady(t, api)
	f.LB = first

	f.DeleteDone(t, f.Fresh(t, web))
	policy := onlyNamed(t, f.sim.FirewallPolicies(), sharedGroup, policyName)
	if rules := ruleOf(f.sim, policy.ID); len(rules) != 1 || rules[0].Description != "api.default."+clusterName {
		t.Errorf("the shared policy's rules = %+v, want api's alone", rules)
	}
	if g := onlyNamed(t, f.sim.ServerGroups(), sharedGroup, groupName); policy.ServerGroup != g.ID {
		t.Errorf("the shared policy is applied to %q, want the shared group %s", policy.ServerGroup, g.ID)
	}
}
