package dosim

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloud(t *testing.T) {
	s, c := setup(t, Options{})
	cl := s.Cloud()
	id := cl.AddInstance("node-a")
	id2 := cl.AddInstance("node-b")
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := c.Droplets.Get(ctx(), n)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := d.PrivateIPv4()
	pub, _ := d.PublicIPv4()
	pub6, _ := d.PublicIPv6()
	if d.Name != "node-a" || d.Status != "active" || d.SizeSlug != "s-2vcpu-4gb" || d.Region.Slug != "nyc3" || priv == "" || pub == "" || pub6 == "" {
		t.Errorf("droplet = %+v", d)
	}
	cl.ShutdownInstance(id)
	if d, _, _ = c.Droplets.Get(ctx(), n); d.Status != "off" {
		t.Errorf("status after shutdown = %q", d.Status)
	}

	n2, _ := strconv.Atoi(id2)
	req := lbReq(n2, n)
	req.ForwardingRules = append(req.ForwardingRules, godo.ForwardingRule{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053})
	req.NetworkStack = "DUALSTACK"
	lb, _, err := c.LoadBalancers.Create(ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Writes() != 1 {
		t.Errorf("writes = %d", cl.Writes())
	}
	want := []simkit.LoadBalancer{{
		ID: lb.ID, Name: "a1b2c3",
		Listeners: []string{"TCP:80->:30080", "UDP:53->:30053"},
		Members:   slices.Sorted(slices.Values([]string{id, id2})),
	}}
	if got := cl.LoadBalancers(); !equalLBs(got, want) {
		t.Errorf("LoadBalancers() = %+v, want %+v", got, want)
	}
	cl.Advance()
	got, _, err := c.LoadBalancers.Get(ctx(), lb.ID)
	if err != nil || got.Status != "active" || got.IP == "" || got.IPv6 == "" {
		t.Fatalf("after Advance: %+v, %v", got, err)
	}
	want[0].Addresses = slices.Sorted(slices.Values([]string{got.IP, got.IPv6}))
	if got := cl.LoadBalancers(); !equalLBs(got, want) {
		t.Errorf("LoadBalancers() once active = %+v, want %+v", got, want)
	}

	restore := cl.Inject(Fault{Status: http.StatusInternalServerError})
	_, _, err = c.Droplets.Get(ctx(), n)
	wantStatus(t, err, 500)
	restore()
	restore = cl.Inject(Fault{Status: http.StatusUnauthorized})
	_, _, err = c.Droplets.Get(ctx(), n)
	wantStatus(t, err, 401)
	restore()
	restore = cl.Inject(Fault{Delay: 20 * time.Millisecond})
	start := time.Now()
	if _, _, err := c.Droplets.Get(ctx(), n); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Errorf("delay fault: %v after %v", err, time.Since(start))
	}
	restore()

	cl.DeleteInstance(id)
	_, _, err = c.Droplets.Get(ctx(), n)
	wantStatus(t, err, http.StatusNotFound)
	if env := cl.Env(); env["DO_OVERRIDE_URL"] != s.URL() || cl.CloudConfig() != "" || cl.Routes() != nil {
		t.Errorf("Env = %v, CloudConfig %q, Routes %v", env, cl.CloudConfig(), cl.Routes())
	}
}

func equalLBs(a, b []simkit.LoadBalancer) bool {
	return slices.EqualFunc(a, b, func(x, y simkit.LoadBalancer) bool {
		return x.ID == y.ID && x.Name == y.Name && slices.Equal(x.Listeners, y.Listeners) && slices.Equal(x.Members, y.Members) &&
			slices.Equal(x.Addresses, y.Addresses)
	})
}
