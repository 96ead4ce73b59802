package openstacksim

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSettleAfter: with Common.SettleAfter (cmd/cloudsim's
// --settle-after), a load balancer being provisioned or deleted and a
// server's tasks (os-stop, delete) settle that long after they started
// although nobody reads them, as Octavia and Nova move on; the reads
// count stays out of reach here. The other project moves on with time
// too.
func TestSettleAfter(t *testing.T) {
	opts := Options{ProvisioningReads: 1000}
	opts.SettleAfter = 5 * time.Millisecond
	s, c := setup(t, opts)
	stopping := s.AddServer(NovaServer{Name: "stopping"})
	deleting := s.AddServer(NovaServer{Name: "deleting"})
	lb, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, "10.0.0.5")).Extract()
	if err != nil || lb.ProvisioningStatus != ProvisioningPendingCreate {
		t.Fatalf("create LB: %+v %v", lb, err)
	}
	if err := servers.Stop(ctx(), c.compute, stopping.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx(), c.compute, deleting.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	other := s.OtherProject()
	if ok := other.SetLoadBalancerStatus(mustAddLB(t, other), ProvisioningPendingUpdate); !ok {
		t.Fatal("other project: no LB")
	}
	// Poll the simulator's own state (no API read, which would count).
	settled := func(context.Context) (bool, error) {
		st, ost := s.State(), other.State()
		return len(st.LoadBalancers) == 1 && st.LoadBalancers[0].ProvisioningStatus == ProvisioningActive &&
			len(st.Servers) == 1 && st.Servers[0].Status == StatusShutoff && st.Servers[0].TaskState == "" &&
			ost.LoadBalancers[0].ProvisioningStatus == ProvisioningActive, nil
	}
	if err := wait.PollUntilContextTimeout(ctx(), time.Millisecond, 10*time.Second, true, settled); err != nil {
		st := s.State()
		t.Fatalf("not settled with time: LBs %+v, servers %+v, the other project's LBs %+v", st.LoadBalancers, st.Servers, other.State().LoadBalancers)
	}
	if err := loadbalancers.Delete(ctx(), c.lb, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	gone := func(context.Context) (bool, error) { return len(s.State().LoadBalancers) == 0, nil }
	if err := wait.PollUntilContextTimeout(ctx(), time.Millisecond, 10*time.Second, true, gone); err != nil {
		t.Fatalf("deleted LB not gone with time: %+v", s.State().LoadBalancers)
	}
}

// mustAddLB adds an ACTIVE load balancer to s and returns its ID.
func mustAddLB(t *testing.T, s *Server) string {
	t.Helper()
	lb, err := s.AddLoadBalancer(ScenarioLoadBalancer{Name: "other-lb"})
	if err != nil {
		t.Fatal(err)
	}
	return lb.ID
}
