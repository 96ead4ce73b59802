package openstacksim

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloudAdapter(t *testing.T) {
	s, c := setup(t, Options{})
	cloud := s.Cloud()
	id := cloud.AddInstance("node-x")
	got, err := servers.Get(ctx(), c.compute, id).Extract()
	if err != nil || got.Name != "node-x" || got.Status != "ACTIVE" {
		t.Fatalf("added instance: %+v, %v", got, err)
	}
	cloud.ShutdownInstance(id)
	if got, _ := servers.Get(ctx(), c.compute, id).Extract(); got.Status != "SHUTOFF" {
		t.Errorf("status after ShutdownInstance = %s", got.Status)
	}
	restore := cloud.Inject(simkit.Fault{Status: http.StatusInternalServerError})
	_, err = servers.Get(ctx(), c.compute, id).Extract()
	wantCode(t, err, http.StatusInternalServerError)
	restore()
	cloud.DeleteInstance(id)
	_, err = servers.Get(ctx(), c.compute, id).Extract()
	wantCode(t, err, http.StatusNotFound)

	before := cloud.Writes()
	lb, err := loadbalancers.Create(ctx(), c.lb, fullLB(s)).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if cloud.Writes() != before+1 {
		t.Errorf("writes = %d, want %d", cloud.Writes(), before+1)
	}
	cloud.Advance()
	if got := getLB(t, c, lb.ID); got.ProvisioningStatus != "ACTIVE" {
		t.Errorf("after Advance: %s", got.ProvisioningStatus)
	}
	lbs := cloud.LoadBalancers()
	if len(lbs) != 1 || lbs[0].Listeners[0] != "TCP:80->:0" || len(lbs[0].Members) != 0 {
		t.Errorf("LoadBalancers = %+v", lbs)
	}
	if !s.SetLoadBalancerStatus(lb.ID, ProvisioningPendingUpdate) || s.SetLoadBalancerStatus("nope", "ERROR") {
		t.Error("SetLoadBalancerStatus")
	}
	wantImmutable(t, loadbalancers.Delete(ctx(), c.lb, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr())
	if cloud.Env() != nil || !strings.Contains(cloud.CloudConfig(), s.AuthURL()) {
		t.Errorf("Env = %v, CloudConfig = %s", cloud.Env(), cloud.CloudConfig())
	}
}

func TestCloudConfig(t *testing.T) {
	s := NewServer(t, Options{})
	d := s.Defaults()
	conf := s.CloudConfig()
	for _, want := range []string{
		"[Global]\n", "auth-url = " + s.URL() + "/identity/v3\n", "username = ccm\n", "password = ccm-secret\n",
		"user-domain-name = Default\n", "project-name = kubernetes\n", "project-domain-name = Default\n", "region = RegionOne\n",
		"[LoadBalancer]\n", "floating-network-id = " + d.FloatingNetworkID + "\n", "subnet-id = " + d.SubnetID + "\n",
		"[Route]\n", "router-id = " + d.RouterID + "\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("cloud.conf lacks %q:\n%s", want, conf)
		}
	}
	odd := New(Options{Users: []User{{Name: "u", Password: `p;#"x`}}, NoDefaults: true})
	conf = odd.CloudConfigFor("http://h")
	if !strings.Contains(conf, `password = "p;#\"x"`) || strings.Contains(conf, "[Route]") {
		t.Errorf("cloud.conf = %s", conf)
	}
}

// TestCloudAdapterDeletedMember: a member whose server is deleted is still
// reported as that server's, so "no longer behind the load balancer" means
// the member is gone, not only its server.
func TestCloudAdapterDeletedMember(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	cloud := s.Cloud()
	kept, gone := s.AddServer(NovaServer{Name: "kept"}), s.AddServer(NovaServer{Name: "gone"})
	if _, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, kept.Ports[0].FixedIPs[0], gone.Ports[0].FixedIPs[0])).Extract(); err != nil {
		t.Fatal(err)
	}
	cloud.DeleteInstance(gone.ID)
	lbs := cloud.LoadBalancers()
	if want := []string{kept.ID, gone.ID}; len(lbs) != 1 || !slices.Equal(lbs[0].Members, slices.Sorted(slices.Values(want))) {
		t.Errorf("LoadBalancers = %+v, want members %v", lbs, want)
	}
	// Its address taken by a new server: the member is that server's.
	again := s.AddServer(NovaServer{Name: "again"})
	if again.Ports[0].FixedIPs[0] != gone.Ports[0].FixedIPs[0] {
		t.Skipf("the address was not reused (%s)", again.Ports[0].FixedIPs[0])
	}
	if got := cloud.LoadBalancers()[0].Members; !slices.Contains(got, again.ID) || slices.Contains(got, gone.ID) {
		t.Errorf("members after reuse = %v", got)
	}
}

// TestOctaviaUpdatedAt: a load balancer's updated_at moves on with every
// change of its provisioning status, as Octavia's does.
func TestOctaviaUpdatedAt(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	lb, err := loadbalancers.Create(ctx(), c.lb, fullLB(s)).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !lb.UpdatedAt.IsZero() {
		t.Errorf("updated_at of a new load balancer = %v, want null", lb.UpdatedAt)
	}
	active := getLB(t, c, lb.ID)
	if active.ProvisioningStatus != "ACTIVE" || active.UpdatedAt.IsZero() {
		t.Fatalf("after a read: %s, updated_at %v", active.ProvisioningStatus, active.UpdatedAt)
	}
	if again := getLB(t, c, lb.ID); !again.UpdatedAt.Equal(active.UpdatedAt) {
		t.Errorf("updated_at moved on a read: %v -> %v", active.UpdatedAt, again.UpdatedAt)
	}
	if _, err := loadbalancers.Update(ctx(), c.lb, lb.ID, loadbalancers.UpdateOpts{Description: new("x")}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := getLB(t, c, lb.ID); got.ProvisioningStatus != "ACTIVE" || !got.UpdatedAt.After(active.UpdatedAt) {
		t.Errorf("after an update: %s, updated_at %v (was %v)", got.ProvisioningStatus, got.UpdatedAt, active.UpdatedAt)
	}
}
