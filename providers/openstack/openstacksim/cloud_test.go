package openstacksim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
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
	restore := cloud.Fail(frameworktest.FaultServerError)
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
