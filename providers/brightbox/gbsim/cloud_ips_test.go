package gbsim

import (
	"net/http"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/cloudipstatus"
	"github.com/brightbox/gobrightbox/v2/enums/mode"
	"github.com/brightbox/gobrightbox/v2/enums/transportprotocol"
)

func TestCloudIPMapToLoadBalancer(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions())
	if err != nil {
		t.Fatal(err)
	}
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{Name: ptr("web"), Mode: mode.Nat,
		PortTranslators: []brightbox.PortTranslator{{Incoming: 443, Outgoing: 2443, Protocol: transportprotocol.Tcp}}})
	if err != nil {
		t.Fatal(err)
	}
	if cip.Status != cloudipstatus.Unmapped || cip.PublicIPv4 == "" || cip.PublicIPv6 == "" || cip.Fqdn == "" {
		t.Fatalf("created = %+v", cip)
	}
	mapped, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID})
	if err != nil {
		t.Fatal(err)
	}
	if mapped.Status != cloudipstatus.Mapped || mapped.LoadBalancer == nil || mapped.LoadBalancer.ID != lb.ID {
		t.Fatalf("mapped = %v, load balancer %+v", mapped.Status, mapped.LoadBalancer)
	}
	got, err := c.LoadBalancer(ctx(), lb.ID)
	if err != nil || len(got.CloudIPs) != 1 || got.CloudIPs[0].ID != cip.ID || got.CloudIPs[0].PublicIPv4 != cip.PublicIPv4 {
		t.Fatalf("LB cloud IPs = %+v, %v", got.CloudIPs, err)
	}

	_, err = c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID})
	wantStatus(t, err, http.StatusConflict)
	_, err = c.DestroyCloudIP(ctx(), cip.ID)
	wantStatus(t, err, http.StatusConflict)

	unmapped, err := c.UnMapCloudIP(ctx(), cip.ID)
	if err != nil || unmapped.Status != cloudipstatus.Unmapped || unmapped.LoadBalancer != nil {
		t.Fatalf("unmapped = %+v, %v", unmapped, err)
	}
	if got, _ := c.LoadBalancer(ctx(), lb.ID); len(got.CloudIPs) != 0 {
		t.Errorf("LB cloud IPs after unmap = %+v", got.CloudIPs)
	}
	_, err = c.UnMapCloudIP(ctx(), cip.ID)
	wantStatus(t, err, http.StatusConflict)
	if _, err := c.DestroyCloudIP(ctx(), cip.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.CloudIP(ctx(), cip.ID)
	wantStatus(t, err, http.StatusNotFound)
	if n := len(s.CloudIPs()); n != 0 {
		t.Errorf("%d cloud IPs left", n)
	}
}

func TestCloudIPMapToServer(t *testing.T) {
	s, c := setup(t, Options{})
	srv := s.AddServer(CloudServer{Name: "worker-1"})
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: srv.ID})
	if err != nil {
		t.Fatal(err)
	}
	if mapped.Server == nil || mapped.Server.ID != srv.ID || mapped.Interface == nil || mapped.Interface.ID != srv.Interface {
		t.Fatalf("mapped: server %+v, interface %+v", mapped.Server, mapped.Interface)
	}
	got, err := c.Server(ctx(), srv.ID)
	if err != nil || len(got.CloudIPs) != 1 || got.CloudIPs[0].ID != cip.ID || got.CloudIPs[0].Status != cloudipstatus.Mapped {
		t.Fatalf("server cloud IPs = %+v, %v", got.CloudIPs, err)
	}
	s.DeleteServer(srv.ID)
	if got, _ := c.CloudIP(ctx(), cip.ID); got.Status != cloudipstatus.Unmapped || got.Server != nil {
		t.Errorf("cloud IP of a deleted server = %v %+v, want unmapped", got.Status, got.Server)
	}
}

func TestCloudIPMappingSettles(t *testing.T) {
	_, c := setup(t, Options{ProvisioningReads: -1, MappingReads: 2})
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions())
	if err != nil {
		t.Fatal(err)
	}
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID}); err != nil {
		t.Fatal(err)
	}
	// Mapping again to the same LB while it settles is accepted.
	if _, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID}); err != nil {
		t.Fatal(err)
	}
	got, err := c.LoadBalancer(ctx(), lb.ID)
	if err != nil || len(got.CloudIPs) != 0 {
		t.Fatalf("first read: cloud IPs %+v, %v; want none yet", got.CloudIPs, err)
	}
	got, err = c.LoadBalancer(ctx(), lb.ID)
	if err != nil || len(got.CloudIPs) != 1 {
		t.Fatalf("second read: cloud IPs %+v, %v; want the cloud IP", got.CloudIPs, err)
	}
}

func TestCloudIPValidation(t *testing.T) {
	s, c := setup(t, Options{})
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{"lba-nope0", "srv-nope0", "volume-1", ""} {
		_, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: dest})
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
	bearer := token(t, s)
	for _, body := range []string{`{"mode":"bridge"}`, `{"mode":""}`, `{"port_translators":[{"incoming":1,"outgoing":2,"protocol":"sctp"}]}`} {
		status, data := call(t, s, bearer, http.MethodPost, "/1.0/cloud_ips", body)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", body, status, data)
		}
		wantErrorBody(t, data, "invalid_arguments")
	}
	if status, _ := call(t, s, bearer, http.MethodPost, "/1.0/cloud_ips", `{"name":`); status != http.StatusBadRequest {
		t.Errorf("truncated body: %d, want 400", status)
	}
	if status, _ := call(t, s, bearer, http.MethodPost, "/1.0/cloud_ips", ""); status != http.StatusCreated {
		t.Errorf("no body: %d, want 201", status)
	}
}

func TestCloudIPAddresses(t *testing.T) {
	s := NewServer(t, Options{})
	if got := ipv6For("109.107.50.0"); got != "2a02:1348:ffff:ffff::6d6b:3200" {
		t.Errorf("ipv6For = %q", got)
	}
	seen := map[string]bool{}
	for range 300 {
		c := s.AddCloudIP(CloudIP{})
		if seen[c.PublicIPv4] || seen[c.PublicIPv6] {
			t.Fatalf("%s: %s or %s handed out twice", c.ID, c.PublicIPv4, c.PublicIPv6)
		}
		seen[c.PublicIPv4], seen[c.PublicIPv6] = true, true
		if c.ReverseDNS != "cip-"+strings.ReplaceAll(c.PublicIPv4, ".", "-")+".gb1.brightbox.com" {
			t.Fatalf("reverse DNS %q for %s", c.ReverseDNS, c.PublicIPv4)
		}
	}
}
