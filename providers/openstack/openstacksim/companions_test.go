package openstacksim

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// TestCompanions: the floating IP on a load balancer's VIP port and the
// Service's node security group serve it while it exists, and serve none
// once it is gone; a server's floating IP and a group the CCM did not
// name are no companions.
func TestCompanions(t *testing.T) {
	s, c := setup(t, Options{})
	node := s.AddServer(NovaServer{Name: "node", Ports: []ServerPort{{FloatingIP: "auto"}}})
	created, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, node.Ports[0].FixedIPs[0])).Extract()
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	fip, err := floatingips.Create(ctx(), c.network, floatingips.CreateOpts{
		FloatingNetworkID: s.Defaults().FloatingNetworkID, PortID: created.VipPortID,
		Description: "Floating IP for Kubernetes external service ns/web from cluster c",
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	spare, err := floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: s.Defaults().FloatingNetworkID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	sg := createGroup(t, c, "lb-sg-9d2c7c5e-0b3a-4c55-8f4e-2a1b3c4d5e6f-ns-web", "Security Group for ns/web Service LoadBalancer in cluster c")
	other := createGroup(t, c, "lb-sg-9d2c7c5e-0b3a-4c55-8f4e-2a1b3c4d5e6f-ns-gone", "Security Group for ns/gone Service LoadBalancer in cluster c")
	createGroup(t, c, "web-admins", "Security Group for ns/web Service LoadBalancer in cluster c")

	if got := s.Cloud().LoadBalancers(); len(got) != 1 || !cmp.Equal(got[0].Addresses, []string{fip.FloatingIP}) {
		t.Errorf("LoadBalancers = %+v, want the floating IP %s as the address", got, fip.FloatingIP)
	}
	want := map[string]string{
		"floatingip/" + fip.ID:   created.ID,
		"floatingip/" + spare.ID: "",
		"securitygroup/" + sg:    created.ID,
		"securitygroup/" + other: "",
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}

	if err := loadbalancers.Delete(ctx(), c.lb, created.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions while the load balancer is PENDING_DELETE (-want +got):\n%s", diff)
	}
	s.Advance()
	_, err = loadbalancers.Get(ctx(), c.lb, created.ID).Extract()
	wantCode(t, err, http.StatusNotFound)
	want["floatingip/"+fip.ID], want["securitygroup/"+sg] = "", ""
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions once the load balancer is gone (-want +got):\n%s", diff)
	}
}

// createGroup creates a security group and returns its ID.
func createGroup(t *testing.T, c clients, name, description string) string {
	t.Helper()
	sg, err := groups.Create(ctx(), c.network, groups.CreateOpts{Name: name, Description: description}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return sg.ID
}

// TestCompanionsOnAUsersVIPPort: a floating IP on a VIP port the user made
// stays on that port when the load balancer goes; it then serves none.
func TestCompanionsOnAUsersVIPPort(t *testing.T) {
	s, c := setup(t, Options{})
	port, err := ports.Create(ctx(), c.network, ports.CreateOpts{NetworkID: s.Defaults().NetworkID, Name: "vip"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	lb, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: "lb", VipPortID: port.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	fip, err := floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: s.Defaults().FloatingNetworkID, PortID: port.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if diff := cmp.Diff(map[string]string{"floatingip/" + fip.ID: lb.ID}, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}
	if err := loadbalancers.Delete(ctx(), c.lb, lb.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if got, err := floatingips.Get(ctx(), c.network, fip.ID).Extract(); err != nil || got.PortID != port.ID {
		t.Fatalf("floating IP after the load balancer went: %+v, %v", got, err)
	}
	if diff := cmp.Diff(map[string]string{"floatingip/" + fip.ID: ""}, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions once the load balancer is gone (-want +got):\n%s", diff)
	}
}
