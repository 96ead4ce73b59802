package openstack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

const (
	opAddExtraRoutes = "PUT /network/v2.0/routers/{id}/add_extraroutes"
	opRemoveExtra    = "PUT /network/v2.0/routers/{id}/remove_extraroutes"
	opUpdateRouter   = "PUT /network/v2.0/routers/{id}"
	opUpdatePort     = "PUT /network/v2.0/ports/{id}"
)

// routesFor initializes the provider from cloudConf and returns its routes.
func routesFor(t *testing.T, cloudConf string) (cloudprovider.Routes, context.Context) {
	t.Helper()
	cloud, ctx, err := newCloud(t, cloudConf)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	r, ok := cloud.Routes()
	if !ok {
		t.Fatal("Routes() reports no routes")
	}
	return r, ctx
}

// addressPairs returns the allowed address pairs of the server's ports.
func addressPairs(sim *openstacksim.Server, serverID string) []string {
	out := []string{}
	for _, p := range sim.State().Ports {
		if p.DeviceID == serverID {
			for _, ap := range p.AllowedAddressPairs {
				out = append(out, ap.IPAddress)
			}
		}
	}
	return out
}

func fixedIP(v openstacksim.NovaServer, i int) string { return v.Ports[0].FixedIPs[i] }

func mustCreate(t *testing.T, ctx context.Context, r cloudprovider.Routes, route *cloudprovider.Route) {
	t.Helper()
	if err := r.CreateRoute(ctx, "test-cluster", "hint", route); err != nil {
		t.Fatalf("CreateRoute(%s -> %s): %v", route.DestinationCIDR, route.TargetNode, err)
	}
}

func mustList(t *testing.T, ctx context.Context, r cloudprovider.Routes) []*cloudprovider.Route {
	t.Helper()
	got, err := r.ListRoutes(ctx, "test-cluster")
	if err != nil {
		t.Fatalf("ListRoutes: %v", err)
	}
	return got
}

func TestRoutes(t *testing.T) {
	for _, tc := range []struct {
		name           string
		disabled       []string
		want, wantNone []string // operations that must / must not be used
	}{
		{name: "extraroute-atomic", want: []string{opAddExtraRoutes, opRemoveExtra}, wantNone: []string{opUpdateRouter}},
		{name: "read-modify-write", disabled: []string{"extraroute-atomic"}, want: []string{opUpdateRouter}, wantNone: []string{opAddExtraRoutes, opRemoveExtra}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := openstacksim.NewServer(t, openstacksim.Options{DisabledExtensions: tc.disabled})
			routerID := sim.Defaults().RouterID
			n1 := sim.AddServer(openstacksim.NovaServer{Name: "node-1"})
			n2 := sim.AddServer(openstacksim.NovaServer{Name: "node-2"})
			r, ctx := routesFor(t, sim.CloudConfig())

			r1 := &cloudprovider.Route{TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"}
			r2 := &cloudprovider.Route{TargetNode: "node-2", DestinationCIDR: "10.244.2.0/24"}
			for _, route := range []*cloudprovider.Route{r1, r2} {
				mustCreate(t, ctx, r, route)
				before := sim.Writes()
				mustCreate(t, ctx, r, route) // again: nothing to do
				if w := sim.Writes() - before; w != 0 {
					t.Errorf("repeated CreateRoute(%s) made %d writes, want 0", route.DestinationCIDR, w)
				}
			}
			wantRouter := map[string]string{"10.244.1.0/24": fixedIP(n1, 0), "10.244.2.0/24": fixedIP(n2, 0)}
			if diff := cmp.Diff(wantRouter, sim.Routes(routerID)); diff != "" {
				t.Errorf("router routes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"10.244.1.0/24"}, addressPairs(sim, n1.ID)); diff != "" {
				t.Errorf("node-1 address pairs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"10.244.2.0/24"}, addressPairs(sim, n2.ID)); diff != "" {
				t.Errorf("node-2 address pairs (-want +got):\n%s", diff)
			}

			want := []*cloudprovider.Route{
				{Name: "10.244.1.0/24 via " + fixedIP(n1, 0), TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"},
				{Name: "10.244.2.0/24 via " + fixedIP(n2, 0), TargetNode: "node-2", DestinationCIDR: "10.244.2.0/24"},
			}
			if diff := cmp.Diff(want, mustList(t, ctx, r)); diff != "" {
				t.Fatalf("ListRoutes (-want +got):\n%s", diff)
			}

			// The route controller deletes what ListRoutes returned, maybe twice.
			for i := range 2 {
				before := sim.Writes()
				if err := r.DeleteRoute(ctx, "test-cluster", want[0]); err != nil {
					t.Fatalf("DeleteRoute: %v", err)
				}
				if w := sim.Writes() - before; i == 1 && w != 0 {
					t.Errorf("repeated DeleteRoute made %d writes, want 0", w)
				}
			}
			if diff := cmp.Diff(map[string]string{"10.244.2.0/24": fixedIP(n2, 0)}, sim.Routes(routerID)); diff != "" {
				t.Errorf("router routes after delete (-want +got):\n%s", diff)
			}
			if got := addressPairs(sim, n1.ID); len(got) != 0 {
				t.Errorf("node-1 address pairs after delete = %v, want none", got)
			}

			// node-2's server goes: its route is a blackhole, deleted like any.
			sim.DeleteServer(n2.ID)
			want = []*cloudprovider.Route{{Name: "10.244.2.0/24 via " + fixedIP(n2, 0), DestinationCIDR: "10.244.2.0/24", Blackhole: true}}
			if diff := cmp.Diff(want, mustList(t, ctx, r)); diff != "" {
				t.Fatalf("ListRoutes after the server went (-want +got):\n%s", diff)
			}
			for range 2 {
				if err := r.DeleteRoute(ctx, "test-cluster", want[0]); err != nil {
					t.Fatalf("DeleteRoute(blackhole): %v", err)
				}
			}
			if got := sim.Routes(routerID); len(got) != 0 {
				t.Errorf("router routes after deleting the blackhole = %v, want none", got)
			}

			stats := sim.Stats()
			for _, op := range tc.want {
				if stats[op] == 0 {
					t.Errorf("%s was never used", op)
				}
			}
			for _, op := range tc.wantNone {
				if stats[op] != 0 {
					t.Errorf("%s was used %d times, want never", op, stats[op])
				}
			}
			if n := stats["GET /network/v2.0/extensions"]; n != 1 {
				t.Errorf("extensions listed %d times, want once", n)
			}
		})
	}
}

// competingWriter makes one competing change, through the API, before the
// first update of the router and of each port the provider sends, so
// that the provider's update fails its If-Match check: another writer (a
// second CCM, an operator) got there in between.
type competingWriter struct {
	sim      *openstacksim.Server
	next     http.Handler
	routerID string

	mu       sync.Mutex
	done     map[string]bool
	refusals int
}

func (c *competingWriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/network/v2.0/") {
		c.mu.Lock()
		first := !c.done[r.URL.Path]
		c.done[r.URL.Path] = true
		c.mu.Unlock()
		if body := c.competingChange(r.URL.Path); first && body != nil {
			cr := httptest.NewRequestWithContext(r.Context(), http.MethodPut, r.URL.Path, strings.NewReader(string(body)))
			cr.Header.Set("X-Auth-Token", r.Header.Get("X-Auth-Token"))
			cr.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			c.next.ServeHTTP(rec, cr)
			if rec.Code != http.StatusOK {
				panic("competing change failed: " + rec.Body.String())
			}
		}
	}
	rec := &statusRecorder{ResponseWriter: w}
	c.next.ServeHTTP(rec, r)
	if rec.status == http.StatusPreconditionFailed {
		c.mu.Lock()
		c.refusals++
		c.mu.Unlock()
	}
}

// competingChange is the body of the competing update of path: the
// router gains a route to 192.168.77.0/24, a port the pair
// 192.168.88.0/24; nil for other paths.
func (c *competingWriter) competingChange(path string) []byte {
	if path == "/network/v2.0/routers/"+c.routerID {
		routes := []map[string]string{{"destination": "192.168.77.0/24", "nexthop": "10.0.0.250"}}
		for d, h := range c.sim.Routes(c.routerID) {
			routes = append(routes, map[string]string{"destination": d, "nexthop": h})
		}
		body, _ := json.Marshal(map[string]any{"router": map[string]any{"routes": routes}})
		return body
	}
	id, ok := strings.CutPrefix(path, "/network/v2.0/ports/")
	if !ok {
		return nil
	}
	pairs := []openstacksim.AddressPair{{IPAddress: "192.168.88.0/24"}}
	for _, p := range c.sim.State().Ports {
		if p.ID == id {
			pairs = append(pairs, p.AllowedAddressPairs...)
		}
	}
	body, _ := json.Marshal(map[string]any{"port": map[string]any{"allowed_address_pairs": pairs}})
	return body
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func TestRoutesConcurrentChange(t *testing.T) {
	sim := openstacksim.New(openstacksim.Options{DisabledExtensions: []string{"extraroute-atomic"}})
	cw := &competingWriter{sim: sim, next: sim.Handler(), routerID: sim.Defaults().RouterID, done: map[string]bool{}}
	ts := httptest.NewServer(cw)
	t.Cleanup(ts.Close)
	n1 := sim.AddServer(openstacksim.NovaServer{Name: "node-1"})
	r, ctx := routesFor(t, sim.CloudConfigFor(ts.URL))

	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"})
	if cw.refusals != 2 {
		t.Errorf("Neutron refused %d updates with 412, want 2 (the router's and the port's)", cw.refusals)
	}
	// Both writers' changes are there: nothing was lost.
	wantRouter := map[string]string{"192.168.77.0/24": "10.0.0.250", "10.244.1.0/24": fixedIP(n1, 0)}
	if diff := cmp.Diff(wantRouter, sim.Routes(cw.routerID)); diff != "" {
		t.Errorf("router routes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.244.1.0/24", "192.168.88.0/24"}, addressPairs(sim, n1.ID), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("address pairs (-want +got):\n%s", diff)
	}

	// A 409 is retried too; a conflict that persists is an error, after a
	// bounded number of attempts.
	n2 := sim.AddServer(openstacksim.NovaServer{Name: "node-2"})
	sim.Inject(openstacksim.Fault{Op: opUpdateRouter, Status: http.StatusConflict, Count: 1})
	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "node-2", DestinationCIDR: "10.244.2.0/24"})
	if got := sim.Routes(cw.routerID)["10.244.2.0/24"]; got != fixedIP(n2, 0) {
		t.Errorf("route after a 409: next hop %q, want %s", got, fixedIP(n2, 0))
	}
	remove := sim.Inject(openstacksim.Fault{Op: opUpdateRouter, Status: http.StatusPreconditionFailed})
	defer remove()
	before := sim.Stats()[opUpdateRouter]
	err := r.CreateRoute(ctx, "test-cluster", "hint", &cloudprovider.Route{TargetNode: "node-2", DestinationCIDR: "10.244.3.0/24"})
	if err == nil || !strings.Contains(err.Error(), "412") {
		t.Errorf("CreateRoute against a router that always moves: %v, want a 412 error", err)
	}
	if n := sim.Stats()[opUpdateRouter] - before; n != 5 {
		t.Errorf("router updates attempted: %d, want 5", n)
	}
}

func TestRoutesIPv6(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	net := sim.AddNetwork(openstacksim.Network{Name: "dual"})
	v4 := sim.AddSubnet(openstacksim.Subnet{NetworkID: net.ID, CIDR: "10.1.0.0/24"})
	v6 := sim.AddSubnet(openstacksim.Subnet{NetworkID: net.ID, CIDR: "fd00:1::/64"})
	router := sim.AddRouter(openstacksim.Router{Name: "dual"}, "", v4.ID, v6.ID)
	dual := sim.AddServer(openstacksim.NovaServer{Name: "dual-1", Ports: []openstacksim.ServerPort{{Network: net.ID}}})
	v4only := sim.AddServer(openstacksim.NovaServer{Name: "v4-only", Ports: []openstacksim.ServerPort{{Network: net.ID, FixedIPs: []string{"10.1.0.50"}}}})
	sim.AddServer(openstacksim.NovaServer{Name: "multi", Ports: []openstacksim.ServerPort{{Network: net.ID, FixedIPs: []string{"10.1.0.60", "10.1.0.61"}}}})
	// A server on a network the router is not on cannot be a next hop.
	sim.AddServer(openstacksim.NovaServer{Name: "elsewhere"})
	conf := strings.Replace(sim.CloudConfig(), "router-id = "+sim.Defaults().RouterID, "router-id = "+router.ID, 1)
	r, ctx := routesFor(t, conf)

	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "dual-1", DestinationCIDR: "10.244.1.0/24"})
	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "dual-1", DestinationCIDR: "fd00:10:244:1::/64"})
	before := sim.Writes()
	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "dual-1", DestinationCIDR: "fd00:10:244:0001:0::/64"}) // same CIDR, spelt otherwise
	if w := sim.Writes() - before; w != 0 {
		t.Errorf("repeated CreateRoute (IPv6) made %d writes, want 0", w)
	}
	wantRouter := map[string]string{"10.244.1.0/24": fixedIP(dual, 0), "fd00:10:244:1::/64": fixedIP(dual, 1)}
	if diff := cmp.Diff(wantRouter, sim.Routes(router.ID)); diff != "" {
		t.Errorf("router routes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.244.1.0/24", "fd00:10:244:1::/64"}, addressPairs(sim, dual.ID)); diff != "" {
		t.Errorf("address pairs (-want +got):\n%s", diff)
	}

	for _, tc := range []struct{ node, cidr, wantErr string }{
		{"v4-only", "fd00:10:244:2::/64", "has no IPv6 address on a subnet of router"},
		{"elsewhere", "10.244.3.0/24", "has no IPv4 address on a subnet of router"},
		{"missing", "10.244.4.0/24", `no server named "missing"`},
		// Nodes are found by name only: ListRoutes could not map the route
		// back to a Node not named after its server.
		{"v4-only.example.com", "10.244.5.0/24", `no server named "v4-only.example.com"`},
		{"v4-only", "not-a-cidr", "is not a CIDR"},
	} {
		err := r.CreateRoute(ctx, "test-cluster", "hint", &cloudprovider.Route{TargetNode: types.NodeName(tc.node), DestinationCIDR: tc.cidr})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CreateRoute(%s -> %s) = %v, want an error with %q", tc.cidr, tc.node, err, tc.wantErr)
		}
	}
	if got := addressPairs(sim, v4only.ID); len(got) != 0 {
		t.Errorf("v4-only address pairs = %v, want none", got)
	}

	// Of several candidate addresses, the Node's InternalIP is the next hop.
	mustCreate(t, ctx, r, &cloudprovider.Route{
		TargetNode:          "multi",
		TargetNodeAddresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "10.1.0.60"}, {Type: corev1.NodeInternalIP, Address: "10.1.0.61"}},
		DestinationCIDR:     "10.244.6.0/24",
	})
	mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "multi", DestinationCIDR: "10.244.7.0/24"})
	if got := sim.Routes(router.ID); got["10.244.6.0/24"] != "10.1.0.61" || got["10.244.7.0/24"] != "10.1.0.60" {
		t.Errorf("next hops of multi: %s via %s and %s via %s; want 10.1.0.61 (its InternalIP) and 10.1.0.60 (its first address)",
			"10.244.6.0/24", got["10.244.6.0/24"], "10.244.7.0/24", got["10.244.7.0/24"])
	}

	var targets []string
	for _, rt := range mustList(t, ctx, r) {
		targets = append(targets, rt.DestinationCIDR+" "+string(rt.TargetNode))
	}
	slices.Sort(targets)
	want := []string{"10.244.1.0/24 dual-1", "10.244.6.0/24 multi", "10.244.7.0/24 multi", "fd00:10:244:1::/64 dual-1"}
	if diff := cmp.Diff(want, targets); diff != "" {
		t.Errorf("ListRoutes (-want +got):\n%s", diff)
	}

	// Deleting by node (a route not from ListRoutes) removes the route of
	// that family only.
	if err := r.DeleteRoute(ctx, "test-cluster", &cloudprovider.Route{TargetNode: "dual-1", DestinationCIDR: "fd00:10:244:1::/64"}); err != nil {
		t.Fatalf("DeleteRoute: %v", err)
	}
	if diff := cmp.Diff([]string{"10.244.1.0/24"}, addressPairs(sim, dual.ID)); diff != "" {
		t.Errorf("address pairs after deleting the IPv6 route (-want +got):\n%s", diff)
	}
	if _, ok := sim.Routes(router.ID)["fd00:10:244:1::/64"]; ok {
		t.Error("IPv6 route still there")
	}
}

func TestRoutesDisabled(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	conf := sim.CloudConfig()
	noRoute := conf[:strings.Index(conf, "\n[Route]")]
	cloud, _, err := newCloud(t, noRoute)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	if r, ok := cloud.Routes(); ok || r != nil {
		t.Errorf("without [Route] router-id: Routes() = %v, %v; want nil, false", r, ok)
	}

	t.Run("Neutron without extraroute", func(t *testing.T) {
		sim := openstacksim.NewServer(t, openstacksim.Options{DisabledExtensions: []string{"extraroute", "extraroute-atomic"}})
		r, ctx := routesFor(t, sim.CloudConfig())
		_, err := r.ListRoutes(ctx, "test-cluster")
		if err == nil || !strings.Contains(err.Error(), "neither the extraroute nor the extraroute-atomic extension") {
			t.Errorf("ListRoutes = %v, want an error naming the missing extensions", err)
		}
	})
	t.Run("Neutron without allowed-address-pairs", func(t *testing.T) {
		sim := openstacksim.NewServer(t, openstacksim.Options{DisabledExtensions: []string{"allowed-address-pairs"}})
		n1 := sim.AddServer(openstacksim.NovaServer{Name: "node-1"})
		r, ctx := routesFor(t, sim.CloudConfig())
		mustCreate(t, ctx, r, &cloudprovider.Route{TargetNode: "node-1", DestinationCIDR: "10.244.1.0/24"})
		if got := sim.Routes(sim.Defaults().RouterID)["10.244.1.0/24"]; got != fixedIP(n1, 0) {
			t.Errorf("next hop %q, want %s", got, fixedIP(n1, 0))
		}
		if got := addressPairs(sim, n1.ID); len(got) != 0 {
			t.Errorf("address pairs = %v, want none", got)
		}
	})
}
