package dosim

import (
	"context"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSettleAfter: with Common.SettleAfter (cmd/cloudsim's
// --settle-after), a load balancer being provisioned, a firewall's
// pending changes and a droplet action settle that long after they
// started although nobody reads them, as the real cloud moves on; the
// reads count stays out of reach here.
func TestSettleAfter(t *testing.T) {
	opts := Options{ProvisioningReads: 1000}
	opts.SettleAfter = 5 * time.Millisecond
	s := NewServer(t, opts)
	c := newClient(t, s, s.Token(), 0)
	id := s.AddDroplet(Droplet{Tags: []string{"web"}}).ID
	lb, _, err := c.LoadBalancers.Create(ctx(), lbReq(id))
	if err != nil || lb.Status != LBStatusNew {
		t.Fatalf("create LB: %+v %v", lb, err)
	}
	fw, _, err := c.Firewalls.Create(ctx(), &godo.FirewallRequest{Name: "fw", Tags: []string{"web"},
		InboundRules: []godo.InboundRule{{Protocol: "tcp", PortRange: "22", Sources: anywhere}}})
	if err != nil || fw.Status != FirewallWaiting {
		t.Fatalf("create firewall: %+v %v", fw, err)
	}
	a, _, err := c.DropletActions.PowerOff(ctx(), id)
	if err != nil || a.Status != ActionInProgress {
		t.Fatalf("power_off: %+v %v", a, err)
	}
	// Poll the simulator's own state (no API read, which would count).
	err = wait.PollUntilContextTimeout(ctx(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		st := s.State()
		acts := s.Actions()
		return st.LoadBalancers[0].Status == LBStatusActive && st.LoadBalancers[0].IP != "" &&
			st.Firewalls[0].Status == FirewallSucceeded && len(st.Firewalls[0].PendingChanges) == 0 &&
			acts[0].Status == ActionCompleted && st.Droplets[0].Status == StatusOff, nil
	})
	if err != nil {
		t.Fatalf("not settled with time: %+v, actions %+v", s.State(), s.Actions())
	}
}
