package gbsim

import (
	"net/http"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
)

func TestLoadBalancerNodesAndListeners(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	a, b := s.AddServer(CloudServer{Name: "a"}), s.AddServer(CloudServer{Name: "b"})
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	lb, err = c.AddNodesToLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerNode{{Node: b.ID}})
	if err != nil || len(lb.Nodes) != 2 {
		t.Fatalf("add_nodes = %+v, %v", lb, err)
	}
	_, err = c.AddNodesToLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerNode{{Node: b.ID}})
	wantStatus(t, err, http.StatusConflict)
	lb, err = c.RemoveNodesFromLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerNode{{Node: a.ID}})
	if err != nil || len(lb.Nodes) != 1 || lb.Nodes[0].ID != b.ID {
		t.Fatalf("remove_nodes = %+v, %v", lb.Nodes, err)
	}
	// The object form is taken too.
	bearer := token(t, s)
	status, data := call(t, s, bearer, http.MethodPost, "/1.0/load_balancers/"+lb.ID+"/add_nodes", `{"nodes":[{"node":"`+a.ID+`"}]}`)
	if status != http.StatusAccepted || !strings.Contains(string(data), a.ID) {
		t.Fatalf("add_nodes object: %d %s", status, data)
	}

	lb, err = c.AddListenersToLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 443, Out: 31443}})
	if err != nil || len(lb.Listeners) != 2 || lb.Listeners[1].Timeout != 50000 {
		t.Fatalf("add_listeners = %+v, %v", lb.Listeners, err)
	}
	_, err = c.AddListenersToLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 443, Out: 1}})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	lb, err = c.RemoveListenersFromLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 80, Out: 31080}})
	if err != nil || len(lb.Listeners) != 1 || lb.Listeners[0].In != 443 {
		t.Fatalf("remove_listeners = %+v, %v", lb.Listeners, err)
	}
	_, err = c.RemoveListenersFromLoadBalancer(ctx(), lb.ID, []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 443, Out: 31443}})
	wantStatus(t, err, http.StatusUnprocessableEntity) // the last one
}

func TestLoadBalancerUpdateAndLock(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := brightbox.LoadBalancerOptions{ID: lb.ID, Nodes: []brightbox.LoadBalancerNode{{Node: srv.ID}}, HTTPSRedirect: ptr(true)}
	updated, err := c.UpdateLoadBalancer(ctx(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Nodes) != 1 || !updated.HTTPSRedirect || updated.Name != lb.Name || len(updated.Listeners) != 1 {
		t.Errorf("updated = %+v; want the nodes and redirect changed, the rest kept", updated)
	}
	if _, err := c.LockLoadBalancer(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.DestroyLoadBalancer(ctx(), lb.ID)
	wantStatus(t, err, http.StatusConflict)
	if _, err := c.UnlockLoadBalancer(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DestroyLoadBalancer(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.LoadBalancer(ctx(), lb.ID); got.Status != loadbalancerstatus.Deleted {
		t.Fatalf("status = %v, want deleted", got.Status)
	}
	_, err = c.UpdateLoadBalancer(ctx(), opts)
	wantStatus(t, err, http.StatusConflict)
}

func TestLoadBalancerACME(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	opts := lbOptions()
	opts.Listeners = append(opts.Listeners, brightbox.LoadBalancerListener{Protocol: listenerprotocol.Https, In: 443, Out: 31080})
	opts.Domains = &[]string{"example.com", "www.example.com"}
	lb, err := c.CreateLoadBalancer(ctx(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Acme == nil || len(lb.Acme.Domains) != 2 || lb.Acme.Domains[0].Status != ACMEPending || lb.Acme.Certificate != nil {
		t.Fatalf("acme = %+v", lb.Acme)
	}
	// Let's Encrypt reaches the load balancer through a cloud IP: none,
	// no validation.
	for range 3 {
		if lb, err = c.LoadBalancer(ctx(), lb.ID); err != nil {
			t.Fatal(err)
		}
	}
	if lb.Status != loadbalancerstatus.Active || lb.Acme.Domains[0].Status != ACMEPending {
		t.Fatalf("without a cloud IP: %v, acme %+v; want active and pending", lb.Status, lb.Acme)
	}
	cip := s.AddCloudIP(CloudIP{Target: lb.ID})
	for range 2 {
		if lb, err = c.LoadBalancer(ctx(), lb.ID); err != nil {
			t.Fatal(err)
		}
	}
	if len(lb.CloudIPs) != 1 || lb.CloudIPs[0].ID != cip.ID {
		t.Fatalf("cloud IPs = %+v", lb.CloudIPs)
	}
	if lb.Acme.Domains[1].Status != ACMEValid || lb.Acme.Certificate == nil || lb.Acme.Certificate.Fingerprint == "" {
		t.Fatalf("acme after two reads = %+v", lb.Acme)
	}
	if !s.SetACMEDomainStatus(lb.ID, "www.example.com", ACMEInvalid, "DNS problem: NXDOMAIN") {
		t.Fatal("no such domain")
	}
	lb, _ = c.LoadBalancer(ctx(), lb.ID)
	if d := lb.Acme.Domains[1]; d.Status != ACMEInvalid || d.LastMessage != "DNS problem: NXDOMAIN" {
		t.Errorf("domain = %+v", d)
	}
}

// TestLoadBalancerRequestsAreStrict sends what gobrightbox cannot (its
// enums refuse to encode unknown values): the API refuses them all.
func TestLoadBalancerRequestsAreStrict(t *testing.T) {
	s := NewServer(t, Options{})
	bearer := token(t, s)
	const hc = `"healthcheck":{"type":"tcp","port":80}`
	const listener = `"listeners":[{"protocol":"tcp","in":80,"out":80}]`
	for _, body := range []string{
		`{"policy":"fastest",` + listener + `,` + hc + `}`,
		`{"policy":"",` + listener + `,` + hc + `}`,
		`{"listeners":[{"protocol":"udp","in":80,"out":80}],` + hc + `}`,
		`{"listeners":[{"protocol":"tcp","in":80,"out":80,"proxy_protocol":"v3"}],` + hc + `}`,
		`{"listeners":[{"protocol":"tcp","in":80,"out":80,"proxy_protocol":""}],` + hc + `}`,
		`{` + listener + `,"healthcheck":{"type":"udp","port":80}}`,
		`{` + listener + `,"healthcheck":{"port":80}}`,
		`{` + listener + `,` + hc + `,"ssl_minimum_version":"SSLv3"}`,
		`{"listeners":[{"protocol":"tcp","in":80,"out":80},{"protocol":"http","in":80,"out":81}],` + hc + `}`,
	} {
		status, data := call(t, s, bearer, http.MethodPost, "/1.0/load_balancers", body)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", body, status, data)
			continue
		}
		wantErrorBody(t, data, "invalid_arguments")
	}
	if n := len(s.LoadBalancers()); n != 0 {
		t.Errorf("%d load balancers made", n)
	}
}
