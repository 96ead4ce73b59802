package ranchersim

import (
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// settleAfter is the Options.SettleAfter of these tests: pending
// resources settle with time, and reads alone (unreachably many) never
// would.
const settleAfter = 5 * time.Millisecond

// timeOnly are Options under which only time settles anything.
func timeOnly() Options {
	o := Options{ProvisioningReads: 1 << 20}
	o.SettleAfter = settleAfter
	return o
}

// TestSettlesWithTime: Cattle's processes run on the server whether or
// not a client reads the resource (a stack activates, a service
// registers and activates, a removed host is purged): with
// Options.SettleAfter (cmd/cloudsim's --settle-after) every pending
// resource of the simulator moves on that long after it started, unread.
func TestSettlesWithTime(t *testing.T) {
	s, c := setup(t, timeOnly())
	k, err := c.Stack.Create(&rancher.Stack{Name: "st"})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := c.LoadBalancerService.Create(&rancher.LoadBalancerService{Name: "lb", StackId: k.Id, StartOnCreate: true,
		LaunchConfig: &rancher.LaunchConfig{Ports: []string{"80:80/tcp"}}, LbConfig: &rancher.LbConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.State != StateRegistering {
		t.Fatalf("created %s, want registering", lb.State)
	}
	simkit.WaitFor(t, "stack active", func() bool { got, _ := s.Stack(k.Id); return got.State == StateActive })
	// registering -> inactive, then (startOnCreate) activating -> active.
	simkit.WaitFor(t, "load balancer active", func() bool { got, _ := s.Service(lb.Id); return got.State == StateActive })

	h := s.AddHost(Host{Hostname: "gone", State: StateInactive})
	s.RemoveHost(h.ID)
	simkit.WaitFor(t, "host purged", func() bool { _, found := s.Host(h.ID); return !found })
}
