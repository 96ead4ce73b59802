package skeleton_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

func TestRoutes(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	n1 := f.sim.AddInstance(skeletonsim.Instance{Name: "node-1"})
	n2 := f.sim.AddInstance(skeletonsim.Instance{Name: "node-2"})
	// Another cluster's route in the same account: never listed, never touched.
	other := f.sim.AddInstance(skeletonsim.Instance{Name: "elsewhere"})
	f.sim.AddRoute(skeletonsim.Route{DestinationCIDR: "10.99.0.0/24", TargetInstanceID: other.ID, Tags: []string{"ccmkit:other-cluster"}})

	routes, _ := f.cloud.Routes()
	for _, r := range []*cloudprovider.Route{
		{TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"},
		{TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"}, // again: a no-op
		{TargetNode: "node-2", DestinationCIDR: "10.244.2.0/24"},
	} {
		if err := routes.CreateRoute(f.ctx, clusterName, "hint", r); err != nil {
			t.Fatalf("CreateRoute(%s): %v", r.DestinationCIDR, err)
		}
	}
	if err := routes.CreateRoute(f.ctx, clusterName, "hint", &cloudprovider.Route{TargetNode: "node-9", DestinationCIDR: "10.244.9.0/24"}); err == nil {
		t.Error("CreateRoute to a node without an instance succeeded")
	}

	// A deleted instance leaves its route behind: a blackhole.
	f.sim.DeleteInstance(n2.ID)
	got, err := routes.ListRoutes(f.ctx, clusterName)
	if err != nil {
		t.Fatalf("ListRoutes: %v", err)
	}
	want := []*cloudprovider.Route{
		{Name: "r-000002", TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"},
		{Name: "r-000003", DestinationCIDR: "10.244.2.0/24", Blackhole: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListRoutes (-want +got):\n%s", diff)
	}

	// The route controller deletes the blackhole, maybe twice.
	for range 2 {
		if err := routes.DeleteRoute(f.ctx, clusterName, want[1]); err != nil {
			t.Fatalf("DeleteRoute: %v", err)
		}
	}
	wantCloud := []skeletonsim.Route{
		{ID: "r-000001", DestinationCIDR: "10.99.0.0/24", TargetInstanceID: other.ID, Tags: []string{"ccmkit:other-cluster"}},
		{ID: "r-000002", DestinationCIDR: "10.244.1.0/24", TargetInstanceID: n1.ID, Tags: []string{"ccmkit:" + clusterName}},
	}
	if diff := cmp.Diff(wantCloud, f.sim.Routes(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("cloud routes (-want +got):\n%s", diff)
	}
}
