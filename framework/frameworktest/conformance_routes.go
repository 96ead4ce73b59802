package frameworktest

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
)

func testRoutes(t *testing.T, s *suite) {
	nodes := s.addNodes("route", 2)
	routes := []*cloudprovider.Route{
		{Name: "r0", TargetNode: types.NodeName(nodes[0].Name), DestinationCIDR: "10.244.0.0/24"},
		{Name: "r1", TargetNode: types.NodeName(nodes[1].Name), DestinationCIDR: "10.244.1.0/24"},
	}
	for _, r := range routes {
		// Twice: creating a route that exists must succeed.
		for range 2 {
			if err := s.cloud.routes.CreateRoute(s.ctx, clusterName, string(nodes[0].UID), r); err != nil {
				t.Fatalf("CreateRoute(%s): %v", r.DestinationCIDR, err)
			}
		}
	}
	got := s.listRoutes(t)
	for _, r := range routes {
		if got[r.DestinationCIDR] != r.TargetNode {
			t.Errorf("ListRoutes: %s -> %q, want -> %q (all: %v)", r.DestinationCIDR, got[r.DestinationCIDR], r.TargetNode, got)
		}
	}
	if len(got) != len(routes) {
		t.Errorf("ListRoutes returned %d routes, want %d: %v", len(got), len(routes), got)
	}

	for range 2 {
		if err := s.cloud.routes.DeleteRoute(s.ctx, clusterName, routes[0]); err != nil {
			t.Fatalf("DeleteRoute: %v", err)
		}
	}
	got = s.listRoutes(t)
	if _, ok := got[routes[0].DestinationCIDR]; ok || len(got) != 1 {
		t.Errorf("after DeleteRoute, ListRoutes = %v; want only %s", got, routes[1].DestinationCIDR)
	}
}

func (s *suite) listRoutes(t *testing.T) map[string]types.NodeName {
	t.Helper()
	list, err := s.cloud.routes.ListRoutes(s.ctx, clusterName)
	if err != nil {
		t.Fatalf("ListRoutes: %v", err)
	}
	out := map[string]types.NodeName{}
	for _, r := range list {
		out[r.DestinationCIDR] = r.TargetNode
	}
	return out
}
