package brightbox_test

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestServerGroupsNeverListed: a list of server groups embeds every
// group's servers (200 groups over 1,000 nodes: 200,000 entries), so
// creating, syncing and deleting load balancers never lists them: a
// group is found by its ID or through its firewall policy.
func TestServerGroupsNeverListed(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
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
// firewall policy and the server group, before applying one to the other.
// The next sync finds that group (by the one list this case costs) and
// applies the policy to it, making no second group; the delete removes
// both.
func TestGroupOfAPolicyLeftUnapplied(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	const name = "web.default." + clusterName
	group := f.sim.AddServerGroup(gbsim.ServerGroup{Name: name})
	f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: name})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	groups := named(f.sim.ServerGroups(), name, groupName)
	if len(groups) != 1 || groups[0].ID != group.ID || len(groups[0].Servers) != 2 {
		t.Fatalf("server groups named %s = %+v; want %s alone, holding the two nodes", name, groups, group.ID)
	}
	policies := named(f.sim.FirewallPolicies(), name, policyName)
	if len(policies) != 1 || policies[0].ServerGroup != group.ID {
		t.Errorf("firewall policies named %s = %+v; want one, applied to %s", name, policies, group.ID)
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
