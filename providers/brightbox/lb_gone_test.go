package brightbox_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestDeletedServerLeftOutOfLoadBalancers: a deleted server leaves its
// server group and load balancer in the cloud, and its Node is still
// listed until the lifecycle controller deletes it. The syncs in between
// do not fail trying to add it back (every load balancer's sync would
// warn): the refusal makes the driver look the server up and leave it
// out, and later syncs know it is gone without asking again.
func TestDeletedServerLeftOutOfLoadBalancers(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	f.AddNodes("node-c")
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	deleted := strings.TrimPrefix(f.Nodes[2].Spec.ProviderID, "brightbox://")
	if !f.sim.DeleteServer(deleted) {
		t.Fatalf("no server %s", deleted)
	}

	before := f.sim.Stats()
	if err := f.Update(t, svc); err != nil {
		t.Fatalf("UpdateLoadBalancer with the deleted server's Node still listed: %v", err)
	}
	got := csitest.DiffStats(before, f.sim.Stats())
	if n := got["GET /1.0/servers/{id}"]; n != 1 {
		t.Errorf("the sync read %d servers, want 1 (the one the API refused): %v", n, got)
	}
	lb := onlyLB(t, f.sim)
	if slices.Contains(lb.Nodes, deleted) || len(lb.Nodes) != 2 {
		t.Errorf("load balancer nodes = %v, want the two live servers", lb.Nodes)
	}
	for _, g := range named(f.sim.ServerGroups(), sharedGroup, groupName) {
		if slices.Contains(g.Servers, deleted) || len(g.Servers) != 2 {
			t.Errorf("server group %s = %v, want the two live servers", g.ID, g.Servers)
		}
	}

	before = f.sim.Stats()
	if err := f.Update(t, svc); err != nil {
		t.Fatalf("second UpdateLoadBalancer: %v", err)
	}
	got = csitest.DiffStats(before, f.sim.Stats())
	if !maps.Equal(got, map[string]int{"GET /1.0/load_balancers/{id}": 1}) {
		t.Errorf("the next sync made %v; want only the reads of a no-op sync", got)
	}
	if ev := f.Drain(); slices.ContainsFunc(ev, func(e string) bool { return strings.HasPrefix(e, "Warning") }) {
		t.Errorf("Warning Events: %v", ev)
	}
}
