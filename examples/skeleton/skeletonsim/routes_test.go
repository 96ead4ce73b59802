package skeletonsim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

func TestRoutes(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	inst := sim.AddInstance(skeletonsim.Instance{Name: "node-1"})
	c := newClient(t, sim)

	route := func(cidr, target string) map[string]any {
		return map[string]any{"destination_cidr": cidr, "target_instance_id": target, "tags": []string{"cluster:k"}}
	}
	steps := []struct {
		name       string
		method     string
		path       string
		body       any
		wantStatus int
	}{
		{"create", "POST", "/v1/routes", route("10.244.1.0/24", inst.ID), 201},
		{"same destination", "POST", "/v1/routes", route("10.244.1.0/24", inst.ID), 409},
		{"unknown target", "POST", "/v1/routes", route("10.244.2.0/24", "i-999999"), 422},
		{"not a CIDR", "POST", "/v1/routes", route("10.244.2.0", inst.ID), 422},
		{"host bits set", "POST", "/v1/routes", route("10.244.2.1/24", inst.ID), 422},
		{"second", "POST", "/v1/routes", route("10.244.2.0/24", inst.ID), 201},
		{"delete second", "DELETE", "/v1/routes/r-000002", nil, 204},
		{"delete again", "DELETE", "/v1/routes/r-000002", nil, 404},
	}
	for _, s := range steps {
		if resp := c.do(s.method, s.path, s.body); resp.status != s.wantStatus {
			t.Errorf("%s: status %d, want %d (%s)", s.name, resp.status, s.wantStatus, resp.body)
		}
	}

	// Deleting the target leaves the route in place.
	sim.DeleteInstance(inst.ID)
	want := []skeletonsim.Route{{ID: "r-000001", DestinationCIDR: "10.244.1.0/24", TargetInstanceID: inst.ID, Tags: []string{"cluster:k"}}}
	if diff := cmp.Diff(want, sim.Routes()); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}

	var listed struct{ Routes []skeletonsim.Route }
	c.do("GET", "/v1/routes?tag=cluster:k", nil).decode(t, &listed)
	if diff := cmp.Diff(want, listed.Routes); diff != "" {
		t.Errorf("GET /v1/routes?tag= (-want +got):\n%s", diff)
	}
}
