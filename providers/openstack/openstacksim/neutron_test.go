package openstacksim

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/common/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

func TestExtensionsAndExternalNetworks(t *testing.T) {
	s, c := setup(t, Options{})
	for _, alias := range []string{"extraroute", "extraroute-atomic", "allowed-address-pairs"} {
		if _, err := extensions.Get(ctx(), c.network, alias).Extract(); err != nil {
			t.Errorf("extension %s: %v", alias, err)
		}
	}
	yes := true
	pages, err := networks.List(c.network, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: &yes}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	var nets []struct {
		networks.Network
		external.NetworkExternalExt
	}
	if err := networks.ExtractNetworksInto(pages, &nets); err != nil {
		t.Fatal(err)
	}
	if len(nets) != 1 || nets[0].ID != s.Defaults().FloatingNetworkID || !nets[0].External {
		t.Errorf("external networks = %+v", nets)
	}
	pages, err = subnets.List(c.network, subnets.ListOpts{NetworkID: s.Defaults().NetworkID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	subs, _ := subnets.ExtractSubnets(pages)
	if len(subs) != 1 || subs[0].CIDR != "10.0.0.0/16" || subs[0].GatewayIP != "10.0.0.1" {
		t.Errorf("subnets = %+v", subs)
	}
	// Neutron rejects filters on unknown attributes.
	_, err = c.network.Get(ctx(), c.network.ServiceURL("ports")+"?colour=red", new(any), nil)
	wantNeutronError(t, err, http.StatusBadRequest, "HTTPBadRequest")

	s2 := NewServer(t, Options{DisabledExtensions: []string{"extraroute-atomic"}})
	c2 := connect(t, s2, passwordAuth(s2))
	_, err = extensions.Get(ctx(), c2.network, "extraroute-atomic").Extract()
	wantCode(t, err, http.StatusNotFound)
}

func TestPortsByDeviceAndFixedIP(t *testing.T) {
	s, c := setup(t, Options{})
	a := s.AddServer(NovaServer{Name: "a", Ports: []ServerPort{{FixedIPs: []string{"10.0.0.50"}}}})
	s.AddServer(NovaServer{Name: "b"})

	list := func(opts ports.ListOpts) []ports.Port {
		t.Helper()
		pages, err := ports.List(c.network, opts).AllPages(ctx())
		if err != nil {
			t.Fatal(err)
		}
		ps, err := ports.ExtractPorts(pages)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	byDevice := list(ports.ListOpts{DeviceID: a.ID})
	if len(byDevice) != 1 || byDevice[0].FixedIPs[0].IPAddress != "10.0.0.50" || byDevice[0].ID != a.Ports[0].ID {
		t.Fatalf("ports of a = %+v", byDevice)
	}
	byIP := list(ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{IPAddress: "10.0.0.50"}}})
	if len(byIP) != 1 || byIP[0].DeviceID != a.ID {
		t.Errorf("ports with 10.0.0.50 = %+v", byIP)
	}
	bySubnet := list(ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{SubnetID: s.Defaults().SubnetID}}, DeviceOwner: "compute:nova"})
	if len(bySubnet) != 2 {
		t.Errorf("compute ports on the subnet = %d, want 2", len(bySubnet))
	}
	routerPorts := list(ports.ListOpts{DeviceID: s.Defaults().RouterID})
	if len(routerPorts) != 2 {
		t.Errorf("router ports = %d, want gateway and interface", len(routerPorts))
	}
	// Paged when asked.
	pages, err := ports.List(c.network, ports.ListOpts{Limit: 1}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := ports.ExtractPorts(pages); len(all) != len(s.State().Ports) {
		t.Errorf("paged ports = %d, want %d", len(all), len(s.State().Ports))
	}
}

func TestPortAllowedAddressPairs(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "a"})
	pairs := []ports.AddressPair{{IPAddress: "10.244.1.0/24"}}
	p, err := ports.Update(ctx(), c.network, v.Ports[0].ID, ports.UpdateOpts{AllowedAddressPairs: &pairs}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.AllowedAddressPairs) != 1 || p.AllowedAddressPairs[0].MACAddress != p.MACAddress {
		t.Errorf("pairs = %+v", p.AllowedAddressPairs)
	}
	// A stale revision is refused.
	stale := p.RevisionNumber - 1
	_, err = ports.Update(ctx(), c.network, p.ID, ports.UpdateOpts{AllowedAddressPairs: &pairs, RevisionNumber: &stale}).Extract()
	wantCode(t, err, http.StatusPreconditionFailed)
	bad := []ports.AddressPair{{IPAddress: "not-an-ip"}}
	_, err = ports.Update(ctx(), c.network, p.ID, ports.UpdateOpts{AllowedAddressPairs: &bad}).Extract()
	wantCode(t, err, http.StatusBadRequest)
	_, err = ports.Update(ctx(), c.network, "missing", ports.UpdateOpts{AllowedAddressPairs: &pairs}).Extract()
	wantCode(t, err, http.StatusNotFound)
}

func TestRouterRoutes(t *testing.T) {
	s, c := setup(t, Options{MaxRoutes: 3})
	rid := s.Defaults().RouterID
	routes := []routers.Route{{DestinationCIDR: "10.244.0.0/24", NextHop: "10.0.0.5"}}
	r, err := routers.Update(ctx(), c.network, rid, routers.UpdateOpts{Routes: &routes}).Extract()
	if err != nil || len(r.Routes) != 1 {
		t.Fatalf("update routes: %+v, %v", r, err)
	}
	add := []routers.Route{{DestinationCIDR: "10.244.1.0/24", NextHop: "10.0.0.6"}, {DestinationCIDR: "10.244.0.0/24", NextHop: "10.0.0.5"}}
	if _, err := extraroutes.Add(ctx(), c.network, rid, extraroutes.Opts{Routes: &add}).Extract(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"10.244.0.0/24": "10.0.0.5", "10.244.1.0/24": "10.0.0.6"}
	if diff := cmp.Diff(want, s.Routes(rid)); diff != "" {
		t.Errorf("routes after add (-want +got):\n%s", diff)
	}
	rm := []routers.Route{{DestinationCIDR: "10.244.0.0/24", NextHop: "10.0.0.5"}, {DestinationCIDR: "10.9.0.0/24", NextHop: "10.0.0.9"}}
	if _, err := extraroutes.Remove(ctx(), c.network, rid, extraroutes.Opts{Routes: &rm}).Extract(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"10.244.1.0/24": "10.0.0.6"}, s.Routes(rid)); diff != "" {
		t.Errorf("routes after remove (-want +got):\n%s", diff)
	}
	for _, hop := range []string{"192.168.9.9", "10.0.0.1"} { // unconnected; the router's own
		bad := []routers.Route{{DestinationCIDR: "10.244.7.0/24", NextHop: hop}}
		_, err := extraroutes.Add(ctx(), c.network, rid, extraroutes.Opts{Routes: &bad}).Extract()
		wantNeutronError(t, err, http.StatusBadRequest, "InvalidRoutes")
	}
	var many []routers.Route
	for _, dst := range []string{"10.1.0.0/24", "10.2.0.0/24", "10.3.0.0/24"} {
		many = append(many, routers.Route{DestinationCIDR: dst, NextHop: "10.0.0.7"})
	}
	_, err = extraroutes.Add(ctx(), c.network, rid, extraroutes.Opts{Routes: &many}).Extract()
	wantNeutronError(t, err, http.StatusBadRequest, "RoutesExhausted")
	if got := s.Routes(rid); len(got) != 1 {
		t.Errorf("a refused change left routes %v", got)
	}
}

func TestFloatingIPs(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "a"})
	d := s.Defaults()
	fip, err := floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: d.FloatingNetworkID, PortID: v.Ports[0].ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if fip.PortID != v.Ports[0].ID || fip.FixedIP != v.Ports[0].FixedIPs[0] || fip.Status != "DOWN" || fip.RouterID != d.RouterID {
		t.Errorf("created = %+v", fip)
	}
	got, err := floatingips.Get(ctx(), c.network, fip.ID).Extract()
	if err != nil || got.Status != "ACTIVE" {
		t.Errorf("get = %+v, %v", got, err)
	}
	// One floating IP per fixed IP.
	_, err = floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: d.FloatingNetworkID, PortID: v.Ports[0].ID}).Extract()
	wantNeutronError(t, err, http.StatusConflict, "FloatingIPPortAlreadyAssociated")
	// Not an external network.
	_, err = floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: d.NetworkID}).Extract()
	wantCode(t, err, http.StatusBadRequest)

	// Disassociate, then the listing by port is empty.
	got, err = floatingips.Update(ctx(), c.network, fip.ID, floatingips.UpdateOpts{PortID: new(string)}).Extract()
	if err != nil || got.PortID != "" {
		t.Fatalf("disassociate: %+v, %v", got, err)
	}
	pages, err := floatingips.List(c.network, floatingips.ListOpts{PortID: v.Ports[0].ID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := floatingips.ExtractFloatingIPs(pages); len(list) != 0 {
		t.Errorf("by port after disassociate = %+v", list)
	}
	if err := floatingips.Delete(ctx(), c.network, fip.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}

	// A subnet no router reaches cannot get a floating IP.
	n := s.AddNetwork(Network{Name: "isolated"})
	s.AddSubnet(Subnet{NetworkID: n.ID, CIDR: "192.168.50.0/24"})
	iso := s.AddServer(NovaServer{Name: "iso", Ports: []ServerPort{{Network: "isolated"}}})
	_, err = floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: d.FloatingNetworkID, PortID: iso.Ports[0].ID}).Extract()
	wantNeutronError(t, err, http.StatusNotFound, "ExternalGatewayForFloatingIPNotFound")
}
