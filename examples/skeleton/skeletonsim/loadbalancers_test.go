package skeletonsim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func validSpec(members ...string) skeletonsim.LoadBalancerSpec {
	return skeletonsim.LoadBalancerSpec{
		Name:      "web",
		Listeners: []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
		Members:   members,
		Tags:      []string{"owner:test"},
	}
}

type lbEnvelope struct {
	LoadBalancer skeletonsim.LoadBalancer `json:"load_balancer"`
}

func TestLoadBalancerLifecycle(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	inst := sim.AddInstance(skeletonsim.Instance{Name: "node-1"})
	c := newClient(t, sim)

	resp := c.do("POST", "/v1/load-balancers", validSpec(inst.ID))
	if resp.status != 201 {
		t.Fatalf("create: %d %s", resp.status, resp.body)
	}
	var created lbEnvelope
	resp.decode(t, &created)
	id := created.LoadBalancer.ID

	steps := []struct {
		name       string
		method     string
		body       any
		wantStatus int
		wantLB     string // status of the load balancer afterwards
	}{
		{"PUT while provisioning", "PUT", validSpec(), 409, skeletonsim.StatusProvisioning},
		{"first GET", "GET", nil, 200, skeletonsim.StatusProvisioning},
		{"second GET activates", "GET", nil, 200, skeletonsim.StatusActive},
		{"PUT when active", "PUT", validSpec(), 200, skeletonsim.StatusActive},
	}
	for _, s := range steps {
		resp := c.do(s.method, "/v1/load-balancers/"+id, s.body)
		if resp.status != s.wantStatus {
			t.Fatalf("%s: status %d, want %d (%s)", s.name, resp.status, s.wantStatus, resp.body)
		}
		if s.wantStatus == 409 && resp.errorCode() != "conflict" {
			t.Errorf("%s: code %q, want conflict", s.name, resp.errorCode())
		}
		if got := sim.LoadBalancers()[0].Status; got != s.wantLB {
			t.Fatalf("%s: load balancer is %s, want %s", s.name, got, s.wantLB)
		}
	}

	want := []skeletonsim.LoadBalancer{{
		ID: id,
		LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
			Name:        "web",
			Algorithm:   "round_robin",
			Listeners:   []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
			HealthCheck: skeletonsim.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
			Members:     []string{},
			Tags:        []string{"owner:test"},
		},
		Status: skeletonsim.StatusActive,
		IPv4:   "198.18.0.1",
	}}
	if diff := cmp.Diff(want, sim.LoadBalancers()); diff != "" {
		t.Errorf("cloud state (-want +got):\n%s", diff)
	}

	if resp := c.do("DELETE", "/v1/load-balancers/"+id, nil); resp.status != 204 {
		t.Errorf("delete: %d %s", resp.status, resp.body)
	}
	if resp := c.do("DELETE", "/v1/load-balancers/"+id, nil); resp.status != 404 {
		t.Errorf("second delete: %d, want 404", resp.status)
	}
	if got := sim.LoadBalancers(); len(got) != 0 {
		t.Errorf("load balancers left: %v", got)
	}
}

func TestAdvanceAndActiveOnCreate(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	c := newClient(t, sim)
	c.do("POST", "/v1/load-balancers", validSpec())
	sim.Advance()
	if lb := sim.LoadBalancers()[0]; lb.Status != "active" || lb.IPv4 == "" {
		t.Errorf("after Advance: %+v", lb)
	}

	instant := skeletonsim.NewServer(t, skeletonsim.Options{ProvisioningReads: -1})
	newClient(t, instant).do("POST", "/v1/load-balancers", validSpec())
	if lb := instant.LoadBalancers()[0]; lb.Status != "active" {
		t.Errorf("ProvisioningReads -1: created %s, want active", lb.Status)
	}
}

// TestSettleAfter: with Common.SettleAfter (cmd/cloudsim's
// --settle-after) a provisioning load balancer nobody reads goes active
// with time, as the real cloud's does.
func TestSettleAfter(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Common: simkit.Common{SettleAfter: 20 * time.Millisecond}})
	newClient(t, sim).do("POST", "/v1/load-balancers", validSpec())
	simkit.WaitFor(t, "the unread load balancer to go active", func() bool {
		return sim.LoadBalancers()[0].Status == skeletonsim.StatusActive
	})
	if reads := sim.Stats()["GET /v1/load-balancers/{id}"] + sim.Stats()["GET /v1/load-balancers"]; reads != 0 {
		t.Errorf("%d reads: it should have settled with time alone", reads)
	}
}

func TestLoadBalancerValidation(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	c := newClient(t, sim)
	with := func(f func(*skeletonsim.LoadBalancerSpec)) skeletonsim.LoadBalancerSpec {
		s := validSpec()
		f(&s)
		return s
	}
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantMsg    string
	}{
		{"malformed JSON", `{"name":`, 400, "invalid JSON"},
		{"unknown field", `{"name":"x","colour":"red"}`, 400, "unknown field"},
		{"trailing data", `{"name":"x"} {}`, 400, "trailing data"},
		{"no name", with(func(s *skeletonsim.LoadBalancerSpec) { s.Name = "" }), 422, "name must be"},
		{"unknown algorithm", with(func(s *skeletonsim.LoadBalancerSpec) { s.Algorithm = "random" }), 422, `unknown algorithm "random"`},
		{"no listeners", with(func(s *skeletonsim.LoadBalancerSpec) { s.Listeners = nil }), 422, "at least one listener"},
		{"port out of range", with(func(s *skeletonsim.LoadBalancerSpec) { s.Listeners[0].Port = 70000 }), 422, "port out of range"},
		{"duplicate listener", with(func(s *skeletonsim.LoadBalancerSpec) {
			s.Listeners = append(s.Listeners, skeletonsim.Listener{Protocol: "TCP", Port: 80, TargetPort: 30081})
		}), 422, "duplicate listener port TCP 80"},
		{"bad protocol", with(func(s *skeletonsim.LoadBalancerSpec) { s.Listeners[0].Protocol = "SCTP" }), 422, `unknown protocol "SCTP"`},
		{"unknown member", with(func(s *skeletonsim.LoadBalancerSpec) { s.Members = []string{"i-999999"} }), 422, `unknown member instance "i-999999"`},
		{"http check without path", with(func(s *skeletonsim.LoadBalancerSpec) { s.HealthCheck.Protocol = "http" }), 422, "needs a path"},
		{"interval too long", with(func(s *skeletonsim.LoadBalancerSpec) { s.HealthCheck.IntervalSeconds = 301 }), 422, "interval 301s"},
		{"empty tag", with(func(s *skeletonsim.LoadBalancerSpec) { s.Tags = []string{""} }), 422, "tags must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.do("POST", "/v1/load-balancers", tt.body)
			if resp.status != tt.wantStatus || !strings.Contains(resp.errorMessage(), tt.wantMsg) {
				t.Errorf("got %d %s, want %d with %q", resp.status, resp.body, tt.wantStatus, tt.wantMsg)
			}
		})
	}
	if got := sim.LoadBalancers(); len(got) != 0 {
		t.Errorf("invalid requests created load balancers: %v", got)
	}
}

func TestListLoadBalancersByTag(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	c := newClient(t, sim)
	for _, tag := range []string{"a", "b", "a"} {
		s := validSpec()
		s.Tags = []string{tag, "common"}
		c.do("POST", "/v1/load-balancers", s)
	}
	tests := map[string][]string{
		"?tag=a":       {"lb-000001", "lb-000003"},
		"?tag=common":  {"lb-000001", "lb-000002", "lb-000003"},
		"?tag=missing": {},
	}
	for query, want := range tests {
		var got struct {
			LoadBalancers []skeletonsim.LoadBalancer `json:"load_balancers"`
		}
		c.do("GET", "/v1/load-balancers"+query, nil).decode(t, &got)
		ids := []string{}
		for _, lb := range got.LoadBalancers {
			ids = append(ids, lb.ID)
		}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("%s (-want +got):\n%s", query, diff)
		}
	}
}

func TestAddLoadBalancer(t *testing.T) {
	sim := skeletonsim.New(skeletonsim.Options{})
	active := sim.AddLoadBalancer(skeletonsim.LoadBalancer{LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
		Name:      "web",
		Listeners: []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
	}})
	pending := sim.AddLoadBalancer(skeletonsim.LoadBalancer{ID: "lb-x", Status: skeletonsim.StatusProvisioning})
	want := []skeletonsim.LoadBalancer{
		{
			ID: "lb-000001",
			LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
				Name:        "web",
				Algorithm:   "round_robin",
				Listeners:   []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
				HealthCheck: skeletonsim.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
				Members:     []string{},
				Tags:        []string{},
			},
			Status: "active",
			IPv4:   "198.18.0.1",
		},
		{
			ID: "lb-x",
			LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
				Algorithm:   "round_robin",
				Listeners:   []skeletonsim.Listener{},
				HealthCheck: skeletonsim.HealthCheck{Protocol: "tcp", IntervalSeconds: 10},
				Members:     []string{},
				Tags:        []string{},
			},
			Status: "provisioning",
		},
	}
	if diff := cmp.Diff(want, []skeletonsim.LoadBalancer{active, pending}); diff != "" {
		t.Errorf("AddLoadBalancer (-want +got):\n%s", diff)
	}
	sim.Advance()
	if got := sim.LoadBalancers()[1].IPv4; got != "198.18.0.2" {
		t.Errorf("after Advance: ipv4 %q, want 198.18.0.2", got)
	}
}
