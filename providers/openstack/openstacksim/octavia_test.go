package openstacksim

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// wantImmutable fails unless err is Octavia's 409 ImmutableObject.
func wantImmutable(t *testing.T, err error) {
	t.Helper()
	wantCode(t, err, http.StatusConflict)
	var e gophercloud.ErrUnexpectedResponseCode
	errors.As(err, &e)
	var body struct{ Faultstring string }
	if json.Unmarshal(e.Body, &body) != nil || !strings.HasSuffix(body.Faultstring, "is immutable and cannot be updated.") {
		t.Fatalf("body %s is not Octavia's ImmutableObject fault", e.Body)
	}
}

func getLB(t *testing.T, c clients, id string) *loadbalancers.LoadBalancer {
	t.Helper()
	lb, err := loadbalancers.Get(ctx(), c.lb, id).Extract()
	if err != nil {
		t.Fatalf("get LB %s: %v", id, err)
	}
	return lb
}

// fullLB is what the OpenStack CCM creates: the whole tree in one call.
func fullLB(s *Server, members ...string) loadbalancers.CreateOpts {
	var ms []pools.CreateMemberOpts
	for _, ip := range members {
		ms = append(ms, pools.CreateMemberOpts{Address: ip, ProtocolPort: 30080, SubnetID: s.Defaults().SubnetID})
	}
	timeout := 60000
	return loadbalancers.CreateOpts{
		Name: "kube_service_c_ns_web", VipSubnetID: s.Defaults().SubnetID, Tags: []string{"kube_service_c_ns_web"},
		Listeners: []listeners.CreateOpts{{
			Name: "listener_0", Protocol: listeners.ProtocolTCP, ProtocolPort: 80, TimeoutClientData: &timeout,
			AllowedCIDRs: []string{"10.20.0.0/16"}, Tags: []string{"kube_service_c_ns_web"},
			DefaultPool: &pools.CreateOpts{
				Name: "pool_0", Protocol: pools.ProtocolPROXYV2, LBMethod: pools.LBMethodRoundRobin, Members: ms,
				Monitor: monitors.CreateOpts{Type: monitors.TypeTCP, Delay: 5, Timeout: 3, MaxRetries: 1},
			},
		}},
	}
}

func TestOctaviaVersions(t *testing.T) {
	_, c := setup(t, Options{OctaviaMinor: 12})
	pages, err := apiversions.List(c.lb).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := apiversions.ExtractAPIVersions(pages)
	if len(vs) != 13 || vs[12].ID != "v2.12" || vs[12].Status != "CURRENT" {
		t.Errorf("versions = %+v", vs)
	}
}

func TestOctaviaLifecycle(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	a := s.AddServer(NovaServer{Name: "a"})
	b := s.AddServer(NovaServer{Name: "b"})
	created, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, a.Ports[0].FixedIPs[0])).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if created.ProvisioningStatus != "PENDING_CREATE" || created.VipAddress == "" || created.VipPortID == "" || len(created.Listeners) != 1 {
		t.Fatalf("created = %+v", created)
	}
	lbID := created.ID

	// Any change while pending is 409.
	_, err = listeners.Create(ctx(), c.lb, listeners.CreateOpts{LoadbalancerID: lbID, Protocol: listeners.ProtocolUDP, ProtocolPort: 53}).Extract()
	wantImmutable(t, err)
	wantImmutable(t, loadbalancers.Delete(ctx(), c.lb, lbID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr())

	// The second read shows it ACTIVE.
	if got := getLB(t, c, lbID); got.ProvisioningStatus != "PENDING_CREATE" {
		t.Fatalf("first read: %s", got.ProvisioningStatus)
	}
	if got := getLB(t, c, lbID); got.ProvisioningStatus != "ACTIVE" || got.OperatingStatus != "ONLINE" {
		t.Fatalf("second read: %s/%s", got.ProvisioningStatus, got.OperatingStatus)
	}
	pages, err := listeners.List(c.lb, listeners.ListOpts{LoadbalancerID: lbID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := listeners.ExtractListeners(pages)
	if len(ls) != 1 || ls[0].TimeoutClientData != 60000 || !slices.Equal(ls[0].AllowedCIDRs, []string{"10.20.0.0/16"}) || ls[0].ProvisioningStatus != "ACTIVE" {
		t.Fatalf("listeners = %+v", ls)
	}
	poolID := ls[0].DefaultPoolID

	// Batch member update replaces the pool's members: 202.
	batch := []pools.BatchUpdateMemberOpts{{Address: b.Ports[0].FixedIPs[0], ProtocolPort: 30080}}
	if err := pools.BatchUpdateMembers(ctx(), c.lb, poolID, batch).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	wantImmutable(t, pools.BatchUpdateMembers(ctx(), c.lb, poolID, batch).ExtractErr())
	s.Advance()
	mpages, err := pools.ListMembers(c.lb, poolID, nil).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	members, _ := pools.ExtractMembers(mpages)
	if len(members) != 1 || members[0].Address != b.Ports[0].FixedIPs[0] || members[0].OperatingStatus != "ONLINE" {
		t.Errorf("members = %+v", members)
	}

	// Listener update: allowed_cidrs cleared, timeouts changed.
	none, tcp := []string{}, 1000
	l, err := listeners.Update(ctx(), c.lb, ls[0].ID, listeners.UpdateOpts{AllowedCIDRs: &none, TimeoutTCPInspect: &tcp}).Extract()
	if err != nil || l.AllowedCIDRs != nil || l.TimeoutTCPInspect != 1000 || l.ProvisioningStatus != "PENDING_UPDATE" {
		t.Fatalf("listener update: %+v, %v", l, err)
	}
	s.Advance()

	// A floating IP on the VIP port.
	fip, err := floatingips.Create(ctx(), c.network, floatingips.CreateOpts{FloatingNetworkID: s.Defaults().FloatingNetworkID, PortID: created.VipPortID}).Extract()
	if err != nil || fip.FixedIP != created.VipAddress {
		t.Fatalf("FIP on VIP: %+v, %v", fip, err)
	}

	want := []simkit.LoadBalancer{{ID: lbID, Name: "kube_service_c_ns_web", Listeners: []string{"TCP:80->:30080"}, Members: []string{b.ID}, Addresses: []string{fip.FloatingIP}}}
	if diff := cmp.Diff(want, s.Cloud().LoadBalancers()); diff != "" {
		t.Errorf("Cloud().LoadBalancers (-want +got):\n%s", diff)
	}

	// Deleting with children needs cascade.
	wantCode(t, loadbalancers.Delete(ctx(), c.lb, lbID, nil).ExtractErr(), http.StatusBadRequest)
	if err := loadbalancers.Delete(ctx(), c.lb, lbID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := getLB(t, c, lbID); got.ProvisioningStatus != "PENDING_DELETE" {
		t.Fatalf("after delete: %s", got.ProvisioningStatus)
	}
	_, err = loadbalancers.Get(ctx(), c.lb, lbID).Extract()
	wantCode(t, err, http.StatusNotFound)
	st := s.State()
	if len(st.Listeners)+len(st.Pools)+len(st.Members)+len(st.HealthMonitors) != 0 {
		t.Errorf("children left: %+v", st)
	}
	got, err := floatingips.Get(ctx(), c.network, fip.ID).Extract()
	if err != nil || got.PortID != "" {
		t.Errorf("FIP after its VIP port went: %+v, %v", got, err)
	}
}

func TestOctaviaStepByStep(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	lb, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: "lb", VipNetworkID: s.Defaults().NetworkID}).Extract()
	if err != nil || lb.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("create: %+v, %v", lb, err)
	}
	l, err := listeners.Create(ctx(), c.lb, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolUDP, ProtocolPort: 53}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// TCP and UDP may share a port; two UDP listeners may not.
	if _, err := listeners.Create(ctx(), c.lb, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 53}).Extract(); err != nil {
		t.Fatal(err)
	}
	_, err = listeners.Create(ctx(), c.lb, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolUDP, ProtocolPort: 53}).Extract()
	wantCode(t, err, http.StatusConflict)
	// A UDP listener takes only UDP pools.
	_, err = pools.Create(ctx(), c.lb, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
	wantCode(t, err, http.StatusBadRequest)
	p, err := pools.Create(ctx(), c.lb, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolUDP, LBMethod: pools.LBMethodSourceIp}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	_, err = pools.Create(ctx(), c.lb, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolUDP, LBMethod: pools.LBMethodRoundRobin}).Extract()
	wantCode(t, err, http.StatusConflict)
	// Amphora refuses SOURCE_IP_PORT.
	_, err = pools.Create(ctx(), c.lb, pools.CreateOpts{LoadbalancerID: lb.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodSourceIpPort}).Extract()
	wantCode(t, err, http.StatusNotImplemented)

	if _, err := pools.CreateMember(ctx(), c.lb, p.ID, pools.CreateMemberOpts{Address: "10.0.0.9", ProtocolPort: 31000}).Extract(); err != nil {
		t.Fatal(err)
	}
	_, err = pools.CreateMember(ctx(), c.lb, p.ID, pools.CreateMemberOpts{Address: "10.0.0.9", ProtocolPort: 31000}).Extract()
	wantCode(t, err, http.StatusConflict)

	// UDP pools: UDP-CONNECT works, HTTPS does not; one monitor per pool.
	_, err = monitors.Create(ctx(), c.lb, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeHTTPS, Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
	wantCode(t, err, http.StatusBadRequest)
	hm, err := monitors.Create(ctx(), c.lb, monitors.CreateOpts{PoolID: p.ID, Type: "UDP-CONNECT", Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	_, err = monitors.Create(ctx(), c.lb, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeTCP, Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
	wantCode(t, err, http.StatusConflict)
	delay := 10
	if _, err := monitors.Update(ctx(), c.lb, hm.ID, monitors.UpdateOpts{Delay: delay}).Extract(); err != nil {
		t.Fatal(err)
	}

	// The status tree.
	tree, err := loadbalancers.GetStatuses(ctx(), c.lb, lb.ID).Extract()
	if err != nil || len(tree.Loadbalancer.Listeners) != 2 {
		t.Fatalf("status tree: %+v, %v", tree, err)
	}

	// ERROR: immutable, but deletable.
	restore := s.FailProvisioning("lb")
	tags := []string{"x"}
	if _, err := loadbalancers.Update(ctx(), c.lb, lb.ID, loadbalancers.UpdateOpts{Tags: &tags}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := getLB(t, c, lb.ID); got.ProvisioningStatus != "ERROR" {
		t.Fatalf("status = %s, want ERROR", got.ProvisioningStatus)
	}
	restore()
	_, err = loadbalancers.Update(ctx(), c.lb, lb.ID, loadbalancers.UpdateOpts{Tags: &tags}).Extract()
	wantImmutable(t, err)
	if err := loadbalancers.Delete(ctx(), c.lb, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if len(s.State().LoadBalancers) != 0 {
		t.Error("LB left after cascade delete")
	}
}

func TestOctaviaListByNameAndTags(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	for _, name := range []string{"a", "b", "c"} {
		if _, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: name, VipSubnetID: s.Defaults().SubnetID, Tags: []string{"k8s", name}}).Extract(); err != nil {
			t.Fatal(err)
		}
	}
	list := func(opts loadbalancers.ListOpts) []string {
		t.Helper()
		pages, err := loadbalancers.List(c.lb, opts).AllPages(ctx())
		if err != nil {
			t.Fatal(err)
		}
		lbs, _ := loadbalancers.ExtractLoadBalancers(pages)
		var names []string
		for _, lb := range lbs {
			names = append(names, lb.Name)
		}
		return names
	}
	if got := list(loadbalancers.ListOpts{Name: "b"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("name=b: %v", got)
	}
	if got := list(loadbalancers.ListOpts{Tags: []string{"k8s", "c"}}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("tags=k8s,c: %v", got)
	}
	if got := list(loadbalancers.ListOpts{Limit: 1}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("paged: %v", got)
	}
	_, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: "bad", VipSubnetID: "missing"}).Extract()
	wantCode(t, err, http.StatusBadRequest)
	_, err = loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: "bad", VipSubnetID: s.Defaults().SubnetID, Provider: "f5"}).Extract()
	wantCode(t, err, http.StatusBadRequest)
}
