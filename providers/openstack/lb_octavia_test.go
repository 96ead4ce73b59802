package openstack

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
)

// TestCreateBody: the create body is gophercloud's, checks included.
func TestCreateBody(t *testing.T) {
	in := testInput(func(c *LoadBalancerConfig) { c.HealthMonitor.Enabled = new(true) })
	want, err := desiredListeners(testService(), in)
	if err != nil {
		t.Fatal(err)
	}
	opts := loadbalancers.CreateOpts{Name: "kube_service_c_ns_web", VipSubnetID: "sub", Tags: []string{"x"}}
	for i := range want {
		opts.Listeners = append(opts.Listeners, listenerCreateOpts(&want[i], true))
	}
	got, err := createBody(opts)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := opts.ToLoadBalancerCreateMap()
	if err != nil {
		t.Fatal(err)
	}
	var gotMap, refMap map[string]any
	refJSON, _ := json.Marshal(ref)
	if err := json.Unmarshal(got, &gotMap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(refJSON, &refMap); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(refMap, gotMap); diff != "" {
		t.Errorf("body (-gophercloud +createBody):\n%s", diff)
	}
	opts.Listeners = append(opts.Listeners, listeners.CreateOpts{Name: "no protocol"})
	if _, err := createBody(opts); err == nil {
		t.Error("a listener without protocol passed the checks")
	}
}
