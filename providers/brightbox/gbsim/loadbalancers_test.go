package gbsim

import (
	"net/http"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
)

func lbOptions(nodes ...string) brightbox.LoadBalancerOptions {
	opts := brightbox.LoadBalancerOptions{
		Name:   ptr("web.default.kubernetes"),
		Policy: balancingpolicy.RoundRobin,
		Listeners: []brightbox.LoadBalancerListener{
			{Protocol: listenerprotocol.Tcp, In: 80, Out: 31080, Timeout: 50000, ProxyProtocol: proxyprotocol.V2},
		},
		Healthcheck: &brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 31080, Request: "/healthz"},
	}
	for _, n := range nodes {
		opts.Nodes = append(opts.Nodes, brightbox.LoadBalancerNode{Node: n})
	}
	return opts
}

func TestLoadBalancerLifecycle(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2, DeletedReads: 1})
	srv := s.AddServer(CloudServer{Name: "worker-1"})

	lb, err := c.CreateLoadBalancer(ctx(), lbOptions(srv.ID))
	if err != nil {
		t.Fatal(err)
	}
	if lb.Status != loadbalancerstatus.Creating || lb.Policy != balancingpolicy.RoundRobin {
		t.Fatalf("created = %v %v, want creating round-robin", lb.Status, lb.Policy)
	}
	if len(lb.Nodes) != 1 || lb.Nodes[0].ID != srv.ID || lb.Listeners[0].ProxyProtocol != proxyprotocol.V2 {
		t.Errorf("nodes %+v, listeners %+v", lb.Nodes, lb.Listeners)
	}
	if lb.Healthcheck.Interval != 5000 || lb.Healthcheck.ThresholdUp != 3 {
		t.Errorf("healthcheck defaults = %+v", lb.Healthcheck)
	}
	got, err := c.LoadBalancer(ctx(), lb.ID)
	if err != nil || got.Status != loadbalancerstatus.Creating {
		t.Fatalf("first read = %v, %v; want creating", got.Status, err)
	}
	got, err = c.LoadBalancer(ctx(), lb.ID)
	if err != nil || got.Status != loadbalancerstatus.Active {
		t.Fatalf("second read = %v, %v; want active", got.Status, err)
	}

	deleted, err := c.DestroyLoadBalancer(ctx(), lb.ID)
	if err != nil || deleted.Status != loadbalancerstatus.Deleting {
		t.Fatalf("delete = %+v, %v; want the LB deleting", deleted, err)
	}
	_, err = c.DestroyLoadBalancer(ctx(), lb.ID)
	wantStatus(t, err, http.StatusConflict)
	s.Advance()
	list, err := c.LoadBalancers(ctx())
	if err != nil || len(list) != 1 || list[0].Status != loadbalancerstatus.Deleted || list[0].DeletedAt == nil {
		t.Fatalf("list after delete = %+v, %v; want it deleted", list, err)
	}
	if list, _ = c.LoadBalancers(ctx()); len(list) != 0 {
		t.Fatalf("second list = %+v, want none", list)
	}
}

func TestLoadBalancerEnumsAreStrict(t *testing.T) {
	_, c := setup(t, Options{})
	for name, change := range map[string]func(*brightbox.LoadBalancerOptions){
		"no listeners":      func(o *brightbox.LoadBalancerOptions) { o.Listeners = nil },
		"no healthcheck":    func(o *brightbox.LoadBalancerOptions) { o.Healthcheck = nil },
		"unknown node":      func(o *brightbox.LoadBalancerOptions) { o.Nodes = []brightbox.LoadBalancerNode{{Node: "srv-nope0"}} },
		"https without tls": func(o *brightbox.LoadBalancerOptions) { o.Listeners[0].Protocol = listenerprotocol.Https },
	} {
		opts := lbOptions()
		change(&opts)
		_, err := c.CreateLoadBalancer(ctx(), opts)
		ae := wantAPIError(t, err, http.StatusUnprocessableEntity)
		if ae.ErrorName == "" || len(ae.Errors) == 0 {
			t.Errorf("%s: error body %q %q", name, ae.ErrorName, ae.Errors)
		}
	}
}

func TestSeededLoadBalancerSettles(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	lb := s.AddLoadBalancer(LoadBalancer{Name: "old", Status: StatusDeleting,
		Listeners: []Listener{{Protocol: "tcp", In: 80, Out: 31080}}, Healthcheck: Healthcheck{Type: "tcp", Port: 31080}})
	cip := s.AddCloudIP(CloudIP{Target: lb.ID})
	got, err := c.LoadBalancer(ctx(), lb.ID)
	if err != nil || got.Status != loadbalancerstatus.Deleted || len(got.CloudIPs) != 0 {
		t.Fatalf("read = %v with %d cloud IPs, %v; want deleted, none mapped", got.Status, len(got.CloudIPs), err)
	}
	if got, _ := c.CloudIP(ctx(), cip.ID); got.LoadBalancer != nil {
		t.Errorf("cloud IP still on %+v", got.LoadBalancer)
	}
}
