package openstack_test

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// Endpoints whose calls these tests count.
const (
	opLBList    = "GET /load-balancer/v2.0/lbaas/loadbalancers"
	opLBGet     = "GET /load-balancer/v2.0/lbaas/loadbalancers/{id}"
	opListeners = "GET /load-balancer/v2.0/lbaas/listeners"
	opPools     = "GET /load-balancer/v2.0/lbaas/pools"
	opMembers   = "GET /load-balancer/v2.0/lbaas/pools/{id}/members"
	opFIPs      = "GET /network/v2.0/floatingips"
	opBatch     = "PUT /load-balancer/v2.0/lbaas/pools/{id}/members"
)

// ops counts the requests since mark by endpoint, token requests excluded.
func (f *lbFixture) ops(mark int) map[string]int {
	out := map[string]int{}
	for _, r := range f.sim.Requests()[mark:] {
		if !strings.Contains(r.Path, "/auth/tokens") {
			out[r.Op]++
		}
	}
	return out
}

// without is ops less the endpoints named.
func without(ops map[string]int, names ...string) map[string]int {
	out := map[string]int{}
	for op, n := range ops {
		if !slices.Contains(names, op) {
			out[op] = n
		}
	}
	return out
}

// ensureAllReady syncs every Service, round after round as the service
// controller's retries do, until all are ready.
func (f *lbFixture) ensureAllReady(t *testing.T, svcs ...*corev1.Service) {
	t.Helper()
	pending := slices.Clone(svcs)
	for round := 1; len(pending) > 0; round++ {
		if round > 30 {
			t.Fatalf("%d load balancers not ready after 30 rounds", len(pending))
		}
		pending = slices.DeleteFunc(pending, func(svc *corev1.Service) bool {
			_, err := f.Ensure(t, svc)
			if err != nil && !frameworktest.IsRetry(err) {
				t.Fatalf("EnsureLoadBalancer %s: %v", svc.Name, err)
			}
			return err == nil
		})
	}
}

// octaviaClient is a client of the simulator's Octavia of its own, to
// change things behind the CCM's back.
func octaviaClient(t *testing.T, sim *openstacksim.Server) *gophercloud.ServiceClient {
	t.Helper()
	pc, err := gopenstack.AuthenticatedClient(t.Context(), gophercloud.AuthOptions{
		IdentityEndpoint: sim.AuthURL(), Username: openstacksim.DefaultUsername, Password: openstacksim.DefaultPassword,
		DomainName: openstacksim.DefaultDomain, TenantName: openstacksim.DefaultProject,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := gopenstack.NewLoadBalancerV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLoadBalancerSharedList: Services are served from one list of the
// project's load balancers: creating three reads no load balancer by ID
// and no child (the create's answer tells the tree), the floating IPs are
// listed once for all, and syncs with nothing to change make no call.
func TestLoadBalancerSharedList(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svcs := []*corev1.Service{f.Service(t, "a", nil), f.Service(t, "b", nil), f.Service(t, "c", nil)}
	mark := f.mark()
	f.ensureAllReady(t, svcs...)
	ops := f.ops(mark)
	t.Logf("3 Services: %v", ops)
	for op, want := range map[string]int{opLBGet: 0, opListeners: 0, opPools: 0, opMembers: 0} {
		if ops[op] != want {
			t.Errorf("%s: %d calls, want %d", op, ops[op], want)
		}
	}
	// One list of every floating IP, and one lookup each of a floating IP
	// left by an earlier load balancer of the Service.
	if ops[opFIPs] > 1+len(svcs) {
		t.Errorf("%s: %d calls, want at most %d", opFIPs, ops[opFIPs], 1+len(svcs))
	}
	if got := len(f.writes(mark)); got != 2*len(svcs) {
		t.Errorf("writes = %v, want a load balancer and a floating IP each", f.writes(mark))
	}
	if ops[opLBList] > 2*len(svcs)+2 {
		t.Errorf("%s: %d calls, want one per round of polls", opLBList, ops[opLBList])
	}

	mark = f.mark()
	for _, svc := range svcs {
		status, err := f.Ensure(t, svc)
		if err != nil {
			t.Fatal(err)
		}
		ingressIP(t, status)
	}
	if got := f.ops(mark); len(got) != 0 {
		t.Errorf("syncs with nothing to change made calls: %v", got)
	}
}

// TestLoadBalancerNodeChurnCalls: a node joining costs each load balancer
// its batch member update and nothing else of its own; the syncs that
// follow while Octavia applies it read only the shared list.
func TestLoadBalancerNodeChurnCalls(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svcs := []*corev1.Service{f.Service(t, "a", nil), f.Service(t, "b", nil, withDNS)}
	f.ensureAllReady(t, svcs...)

	f.addNode("node-c")
	mark := f.mark()
	for _, svc := range svcs {
		if err := f.Update(t, svc); !frameworktest.IsRetry(err) {
			t.Fatalf("UpdateLoadBalancer %s = %v, want a RetryError while the change applies", svc.Name, err)
		}
	}
	if got := f.ops(mark); !maps.Equal(got, map[string]int{opBatch: 2}) {
		t.Errorf("node joined: calls %v, want one member update per load balancer", got)
	}
	mark = f.mark()
	f.ensureAllReady(t, svcs...)
	ops := f.ops(mark)
	if got := without(ops, opLBList, opBatch); len(got) != 0 || ops[opLBList] == 0 {
		t.Errorf("syncs after the update: %v, want load-balancer lists only (and b's second pool)", ops)
	}
	for _, lb := range f.sim.Cloud().LoadBalancers() {
		if !slices.Equal(lb.Members, memberIDs(f, f.Nodes...)) {
			t.Errorf("%s: members %v", lb.Name, lb.Members)
		}
	}
	// The second port of b: its pool is updated in the next sync.
	if got := len(f.writes(mark)); got != 1 {
		t.Errorf("writes after the first round: %v, want the second pool of b", f.writes(mark))
	}

	// The node leaves: again one member update per pool.
	f.Nodes = f.Nodes[:2]
	mark = f.mark()
	f.ensureAllReady(t, svcs...)
	if got := f.ops(mark); got[opBatch] != 3 || len(without(got, opBatch, opLBList)) != 0 {
		t.Errorf("node left: calls %v, want 3 member updates and lists", got)
	}
}

// TestLoadBalancerChangedBehindTheCCM: a change made outside the CCM moves
// the load balancer's updated_at, so the next sync from a fresh list reads
// its children again and repairs it; with nothing changed, a sync from a
// fresh list reads no child (the floating IPs are listed as often as the
// load balancers).
func TestLoadBalancerChangedBehindTheCCM(t *testing.T) {
	f := newLBFixtureTTL(t, time.Nanosecond, "", nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)

	mark := f.mark()
	if _, err := f.Ensure(t, svc); err != nil {
		t.Fatal(err)
	}
	if ops := f.ops(mark); len(without(ops, opLBList, opFIPs)) != 0 {
		t.Errorf("no-op sync from a fresh list: calls %v, want the lists only", ops)
	}

	st := f.sim.State()
	poolID := st.Pools[0].ID
	oc := octaviaClient(t, f.sim)
	if err := pools.DeleteMember(t.Context(), oc, poolID, membersOf(st, poolID)[0].ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	f.sim.Advance()
	mark = f.mark()
	f.EnsureReady(t, svc)
	if got := f.writes(mark); !slices.Equal(got, []string{"PUT /load-balancer/v2.0/lbaas/pools/" + poolID + "/members"}) {
		t.Errorf("writes = %v, want the members put back", got)
	}
	if ops := f.ops(mark); ops[opMembers] == 0 {
		t.Errorf("calls %v: the members were not read again", ops)
	}
	if got := f.OnlyLoadBalancer(t).Members; !slices.Equal(got, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v", got)
	}
}

// TestLoadBalancerErrorAfterWrite: a member update Octavia fails to apply
// leaves the load balancer in ERROR, which the syncs polling for the
// change see in the shared list: it is recreated with its floating IP.
func TestLoadBalancerErrorAfterWrite(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)
	ip := ingressIP(t, f.EnsureReady(t, svc))
	old := f.OnlyLoadBalancer(t).ID
	restore := f.sim.FailProvisioning(old)
	f.addNode("node-c")
	var err error
	for range 5 {
		if _, err = f.Ensure(t, svc); !frameworktest.IsRetry(err) {
			break
		}
		if f.sim.Cloud().LoadBalancers()[0].ID != old {
			break // deleted: recreating
		}
	}
	restore()
	if events := strings.Join(f.Drain(), "\n"); !strings.Contains(events, "Warning RecreatingLoadBalancer") {
		t.Fatalf("no recreation (last sync: %v); events:\n%s", err, events)
	}
	status := f.EnsureReady(t, svc)
	lb := f.OnlyLoadBalancer(t)
	if lb.ID == old || !slices.Equal(lb.Members, memberIDs(f, f.Nodes...)) {
		t.Errorf("after recovery: %+v (old ID %s)", lb, old)
	}
	if got := ingressIP(t, status); got != ip {
		t.Errorf("status IP %s, want the kept floating IP %s", got, ip)
	}
}

// TestLoadBalancerStatusAfterRestart: a CCM that starts with load
// balancers in place (nothing known of them) publishes their full status
// at the first sync, ipMode Proxy included, for one named for the Service
// and one adopted by ID alike.
func TestLoadBalancerStatusAfterRestart(t *testing.T) {
	f := newLBFixture(t, "", nil)
	proxy := map[string]string{openstack.AnnotationPrefix + "proxy-protocol": "true"}
	named := f.Service(t, "named", proxy)
	f.EnsureReady(t, named)
	byHand, err := f.sim.AddLoadBalancer(openstacksim.ScenarioLoadBalancer{
		Name:      "made-by-hand",
		Listeners: []openstacksim.ScenarioListener{{Protocol: "TCP", Port: 80, Pool: &openstacksim.ScenarioPool{Protocol: "PROXY", MemberPort: 30080, Members: []string{"node-a", "node-b"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	adopted := f.Service(t, "adopted", map[string]string{openstack.AnnotationPrefix + "proxy-protocol": "true", openstack.AnnotationLoadBalancerID: byHand.ID})
	f.EnsureReady(t, adopted)

	// A new CCM on the same cloud and Services.
	next := f.Start(t)
	for _, svc := range []*corev1.Service{named, adopted} {
		status, err := next.EnsureLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes)
		if err != nil {
			t.Fatalf("%s: first sync: %v", svc.Name, err)
		}
		if ing := status.Ingress; len(ing) != 1 || ing[0].IPMode == nil || *ing[0].IPMode != corev1.LoadBalancerIPModeProxy {
			t.Errorf("%s: status = %+v, want ipMode Proxy", svc.Name, status)
		}
	}
}

// TestLoadBalancerConcurrentSyncs: Services synced by several workers at
// once, as the service controller does, share the list and what the
// driver knows: each load balancer is created once and takes one member
// update when a node joins.
func TestLoadBalancerConcurrentSyncs(t *testing.T) {
	f := newLBFixture(t, "", nil)
	var svcs []*corev1.Service
	for i := range 8 {
		svcs = append(svcs, f.Service(t, string(rune('a'+i)), nil))
	}
	syncAll := func(step func(*corev1.Service) error) {
		var wg sync.WaitGroup
		work := make(chan *corev1.Service)
		for range 4 {
			wg.Go(func() {
				for svc := range work {
					for i := 0; ; i++ {
						err := step(svc)
						if err == nil {
							break
						}
						if !frameworktest.IsRetry(err) || i == 30 {
							t.Errorf("%s: %v", svc.Name, err)
							break
						}
					}
				}
			})
		}
		for _, svc := range svcs {
			work <- svc
		}
		close(work)
		wg.Wait()
	}
	mark := f.mark()
	syncAll(func(svc *corev1.Service) error {
		_, err := f.Ensure(t, svc)
		return err
	})
	if got := f.ops(mark); got["POST /load-balancer/v2.0/lbaas/loadbalancers"] != len(svcs) {
		t.Errorf("creates: %v", got)
	}
	f.addNode("node-c")
	nodes := slices.Clone(f.Nodes)
	mark = f.mark()
	syncAll(func(svc *corev1.Service) error {
		return f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), nodes)
	})
	// One write per load balancer, and no other. Its children are known
	// from the creates; a list that started before a create settled may
	// leave one load balancer's children to be read again (three reads),
	// which is correct, only slower, so the reads get that much slack.
	got := f.ops(mark)
	if got[opBatch] != len(svcs) || len(without(got, opBatch, opLBList, opListeners, opPools, opMembers)) != 0 {
		t.Errorf("node joined: calls %v, want one member update per load balancer, lists and few reads", got)
	}
	if reads := got[opListeners] + got[opPools] + got[opMembers]; reads > 3*2 {
		t.Errorf("node joined: %d reads of children (%v), want the children known for most load balancers", reads, got)
	}
	for _, lb := range f.sim.Cloud().LoadBalancers() {
		if !slices.Equal(lb.Members, memberIDs(f, f.Nodes...)) {
			t.Errorf("%s: members %v", lb.Name, lb.Members)
		}
	}
}
