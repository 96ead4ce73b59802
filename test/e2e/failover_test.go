package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

var leaderElection = []string{
	"--leader-elect=true",
	"--leader-elect-lease-duration=4s",
	"--leader-elect-renew-deadline=3s",
	"--leader-elect-retry-period=1s",
}

// testLeaderFailover runs two CCM replicas with leader election, kills the
// leader while it is creating a load balancer (the cloud is slow and the LB
// still provisioning), and checks that the other replica takes over and
// finishes the job with exactly one LB in the cloud.
func testLeaderFailover(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{Latency: 200 * time.Millisecond})
	a, err := c.StartCCM("ccm-a", leaderElection...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.StartCCM("ccm-b", leaderElection...)
	if err != nil {
		t.Fatal(err)
	}
	addNodes(t, c, "node", 2)

	leader, standby := a, b
	if isLeader(b) {
		leader, standby = b, a
	}
	if !isLeader(leader) {
		t.Fatal("no replica logged acquiring the lease, though nodes were initialized")
	}

	createLBService(t, c, "web", 80)
	// Mid-reconcile: the LB exists in the cloud, the Service has no
	// ingress yet.
	eventually(t, 60*time.Second, "the leader to start creating the LB", func(ctx context.Context) (bool, error) {
		return len(c.Sim.LoadBalancers()) == 1, nil
	})
	svc, err := getService(t.Context(), c, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Status.LoadBalancer.Ingress) != 0 {
		t.Log("the LB became ready before the leader was killed; the failover is then only checked for idempotence")
	}
	leader.Kill()

	waitForIngress(t, c, "web")
	if !isLeader(standby) {
		t.Fatal("the standby replica never acquired the lease")
	}
	cloudLB(t, c, "exactly one LB after the failover", func(frameworktest.LoadBalancer) bool { return true })
	consistently(t, 5*time.Second, "exactly one LB", func(context.Context) error {
		if n := len(c.Sim.LoadBalancers()); n != 1 {
			t.Fatalf("cloud holds %d load balancers after the failover, want exactly 1", n)
		}
		return nil
	})
}

func isLeader(c *cluster.CCM) bool {
	return strings.Contains(strings.ToLower(c.Log()), "successfully acquired lease")
}
