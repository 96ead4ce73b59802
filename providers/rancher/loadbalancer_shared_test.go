package rancher_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// calls is how many requests the simulator served in all.
func calls(sim *ranchersim.Server) int {
	n := 0
	for _, c := range sim.Stats() {
		n += c
	}
	return n
}

// hostUUID is the host uuid of a Node of the fixture.
func hostUUID(n *corev1.Node) string { return strings.TrimPrefix(n.Spec.ProviderID, "rancher://") }

// assertMembers fails unless every live load balancer of Cattle sends its
// traffic to exactly the hosts of nodes (the simulator's view: the hosts
// the IPs of the external services it links to and its port rules name).
func assertMembers(t *testing.T, sim *ranchersim.Server, lbs int, nodes []*corev1.Node) {
	t.Helper()
	var want []string
	for _, n := range nodes {
		want = append(want, hostUUID(n))
	}
	slices.Sort(want)
	got := sim.Cloud().LoadBalancers()
	if len(got) != lbs {
		t.Errorf("Cattle holds %d live load balancers, want %d", len(got), lbs)
	}
	for _, lb := range got {
		if diff := cmp.Diff(want, lb.Members); diff != "" {
			t.Errorf("load balancer %s (%s) members (-want +got):\n%s", lb.ID, lb.Name, diff)
		}
	}
}

// TestLoadBalancerNodeChurnShared: the load balancers of 20 Services
// share one external service, so a node joining costs one PUT of it (and
// one host list for the Node, whose InternalIP the node controller has not
// written yet) across the 20 UpdateLoadBalancer calls the service
// controller makes, and a node leaving one PUT; every load balancer
// targets the new node set after the first of them. Before, each load
// balancer had its own: 20 PUTs each time.
func TestLoadBalancerNodeChurnShared(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	const n = 20
	var svcs []*corev1.Service
	for i := range n {
		svc := f.Service(t, fmt.Sprintf("web-%d", i), nil)
		f.EnsureReady(t, svc)
		svcs = append(svcs, svc)
	}
	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	if ext.Name != sharedName {
		t.Fatalf("the one external service is %q, want %q", ext.Name, sharedName)
	}
	assertMembers(t, f.sim, n, f.Nodes)

	// The service controller syncs every load balancer when the joining
	// Node gets its providerID, before its addresses.
	h := f.sim.AddHost(ranchersim.Host{Hostname: "node-c"})
	f.Nodes = append(f.Nodes, frameworktest.Node("node-c", "rancher://"+h.UUID))
	syncAll := func(what string) {
		t.Helper()
		before, writes := calls(f.sim), f.sim.Writes()
		for i, svc := range svcs {
			if err := f.Update(t, svc); err != nil {
				t.Fatalf("UpdateLoadBalancer of %s: %v", svc.Name, err)
			}
			if i == 0 {
				// The first sync has made the change for all.
				assertMembers(t, f.sim, n, f.Nodes)
			}
		}
		got := calls(f.sim) - before
		t.Logf("%s: %d calls, %d writes for %d load balancers", what, got, f.sim.Writes()-writes, n)
		if got > 5 || f.sim.Writes()-writes != 1 {
			t.Errorf("%s made %d calls and %d writes across %d load balancers, want at most 5 calls and one write", what, got, f.sim.Writes()-writes, n)
		}
		assertMembers(t, f.sim, n, f.Nodes)
	}
	syncAll("a node joining")

	f.Nodes = slices.DeleteFunc(f.Nodes, func(n *corev1.Node) bool { return n.Name == "node-b" })
	syncAll("a node leaving")

	if got := onlyService(t, f.sim, ranchersim.KindExternal); got.ID != ext.ID {
		t.Errorf("the shared external service is %s, want the same %s", got.ID, ext.ID)
	}
}

// seedOwnBackend makes what an earlier ccmkit made for svc: an active load
// balancer in the stack whose port rules go to its own external service
// lb-<x>-nodes (holding nodes' IPs), which it links.
func seedOwnBackend(f *lbFixture, stackID string, svc *corev1.Service, nodes []*corev1.Node) (lb, ext ranchersim.Service) {
	name := "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
	ext = f.sim.AddService(ranchersim.Service{
		Kind: ranchersim.KindExternal, Name: name + "-nodes", StackID: stackID, ExternalIPAddresses: nodeIPs(nodes),
	})
	lb = f.sim.AddService(ranchersim.Service{
		Name: name, StackID: stackID,
		LaunchConfig: &ranchersim.LaunchConfig{Ports: []string{"53:53/udp", "80:80/tcp"}, ImageUUID: "docker:" + ranchersim.DefaultLBImage},
		LBConfig: &ranchersim.LBConfig{PortRules: []ranchersim.PortRule{
			{SourcePort: 53, TargetPort: 30053, Protocol: "udp", ServiceID: ext.ID},
			{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceID: ext.ID},
		}},
		Links: []ranchersim.ServiceLink{{ServiceID: ext.ID, Name: ext.Name}},
	})
	return lb, ext
}

// TestLoadBalancerMigrationToShared: load balancers an earlier ccmkit made,
// each with its own lb-<x>-nodes, move to the shared external service at
// their next sync (linked to it, their port rules moved, their own
// removed), with a backend after every write Cattle answered; they keep
// their IDs and endpoints, and a node joining then costs one write.
func TestLoadBalancerMigrationToShared(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	stack := f.sim.AddStack(ranchersim.Stack{Name: lbStack, ExternalID: lbStack + "://", State: ranchersim.StateActive})
	var svcs []*corev1.Service
	var lbIDs, own []string
	endpoints := map[string][]string{}
	for i := range 3 {
		svc := f.Service(t, fmt.Sprintf("old-%d", i), nil)
		lb, ext := seedOwnBackend(f, stack.ID, svc, f.Nodes)
		svcs, lbIDs, own = append(svcs, svc), append(lbIDs, lb.ID), append(own, ext.ID)
		endpoints[lb.ID] = endpointIPs(f.sim.Endpoints(lb.ID))
	}
	f.afterWrite = func(*http.Request) {
		for _, id := range lbIDs {
			assertBackend(t, f.sim, id)
		}
	}
	for _, svc := range svcs {
		f.EnsureReady(t, svc)
	}
	f.afterWrite = nil

	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	if ext.Name != sharedName {
		t.Fatalf("the one external service left is %q, want the shared %q", ext.Name, sharedName)
	}
	for _, id := range own {
		if s, _ := f.sim.Service(id); s.Removed == nil && s.State != ranchersim.StateRemoving {
			t.Errorf("own external service %s (%s) is %s, want removed", id, s.Name, s.State)
		}
	}
	for _, id := range lbIDs {
		lb, _ := f.sim.Service(id)
		if lb.Removed != nil || lb.State != ranchersim.StateActive {
			t.Errorf("load balancer %s is %s, want the same one, active", id, lb.State)
		}
		// Cattle drops a link once the service it names is removed (the
		// last removal may still be under way).
		links := slices.DeleteFunc(lb.Links, func(l ranchersim.ServiceLink) bool {
			s, _ := f.sim.Service(l.ServiceID)
			return s.Removed != nil || s.State == ranchersim.StateRemoving
		})
		if diff := cmp.Diff([]string{ext.ID}, linkIDs(links)); diff != "" {
			t.Errorf("load balancer %s links (-want +got):\n%s", id, diff)
		}
		for _, r := range lb.LBConfig.PortRules {
			if r.ServiceID != ext.ID {
				t.Errorf("load balancer %s: port %d goes to %s, want the shared %s", id, r.SourcePort, r.ServiceID, ext.ID)
			}
		}
		if got := endpointIPs(f.sim.Endpoints(id)); !slices.Equal(got, endpoints[id]) {
			t.Errorf("load balancer %s public endpoints %v, want the old %v", id, got, endpoints[id])
		}
	}
	assertMembers(t, f.sim, len(svcs), f.Nodes)

	f.AddNodes("node-c")
	writes := f.sim.Writes()
	for _, svc := range svcs {
		if err := f.Update(t, svc); err != nil {
			t.Fatalf("UpdateLoadBalancer: %v", err)
		}
	}
	if w := f.sim.Writes() - writes; w != 1 {
		t.Errorf("a node joining the migrated load balancers made %d writes, want 1", w)
	}
	assertMembers(t, f.sim, len(svcs), f.Nodes)
}

// TestLoadBalancerSharedDelete: the shared external service outlives every
// load balancer but the last; deleting the last removes it.
func TestLoadBalancerSharedDelete(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	a, b := f.Service(t, "a", nil), f.Service(t, "b", nil)
	f.EnsureReady(t, a)
	f.EnsureReady(t, b)
	ext := onlyService(t, f.sim, ranchersim.KindExternal)

	f.DeleteDone(t, a)
	if got := onlyService(t, f.sim, ranchersim.KindExternal); got.ID != ext.ID {
		t.Fatalf("after one delete the external service is %s, want the shared %s kept", got.ID, ext.ID)
	}
	assertBackend(t, f.sim, onlyService(t, f.sim, ranchersim.KindLoadBalancer).ID)
	assertMembers(t, f.sim, 1, f.Nodes)

	f.DeleteDone(t, b)
	if n := len(live(f.sim, ranchersim.KindLoadBalancer)) + len(live(f.sim, ranchersim.KindExternal)); n != 0 {
		t.Errorf("after the last delete Cattle holds %d live services, want none: %+v", n, f.sim.Services())
	}

	// A new load balancer makes it again.
	c := f.Service(t, "c", nil)
	f.EnsureReady(t, c)
	if got := onlyService(t, f.sim, ranchersim.KindExternal); got.Name != sharedName || got.ID == ext.ID {
		t.Errorf("external service %s %q, want a new %q", got.ID, got.Name, sharedName)
	}
	assertMembers(t, f.sim, 1, f.Nodes)
}

// TestLoadBalancerSharedAndLocal: a Service moving to externalTrafficPolicy
// Local leaves the shared external service for one of its own (Cattle
// health-checks an external service's addresses), which the others keep;
// the last to leave removes it, and one moving back makes it again, each
// load balancer with a backend after every write.
func TestLoadBalancerSharedAndLocal(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	a, b := f.Service(t, "a", nil), f.Service(t, "b", nil)
	f.EnsureReady(t, a)
	f.EnsureReady(t, b)
	shared := onlyService(t, f.sim, ranchersim.KindExternal)
	var lbIDs []string
	for _, lb := range live(f.sim, ranchersim.KindLoadBalancer) {
		lbIDs = append(lbIDs, lb.ID)
	}
	f.afterWrite = func(*http.Request) {
		for _, id := range lbIDs {
			assertBackend(t, f.sim, id)
		}
	}
	local := func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	}

	a = f.UpdateService(t, a, local)
	f.EnsureReady(t, a)
	exts := live(f.sim, ranchersim.KindExternal)
	if len(exts) != 2 || !slices.ContainsFunc(exts, func(s ranchersim.Service) bool { return s.ID == shared.ID }) {
		t.Fatalf("external services %+v, want the shared one kept beside a's own", exts)
	}
	if got, _ := f.sim.Service(shared.ID); len(got.Links) != 0 {
		t.Errorf("the shared external service links %+v", got.Links)
	}

	b = f.UpdateService(t, b, func(s *corev1.Service) { local(s); s.Spec.HealthCheckNodePort = 32101 })
	f.EnsureReady(t, b)
	if s, _ := f.sim.Service(shared.ID); s.Removed == nil && s.State != ranchersim.StateRemoving {
		t.Errorf("the shared external service is %s with no load balancer using it, want removed", s.State)
	}
	if exts := live(f.sim, ranchersim.KindExternal); len(exts) != 2 || slices.ContainsFunc(exts, func(s ranchersim.Service) bool { return s.HealthCheck == nil }) {
		t.Errorf("external services %+v, want the two health-checked ones", exts)
	}

	a = f.UpdateService(t, a, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyCluster, 0
	})
	f.EnsureReady(t, a)
	f.afterWrite = nil
	if _, ok := f.sim.ServiceByName(sharedName); !ok {
		t.Error("no shared external service after a Service moved back to Cluster")
	}
	assertMembers(t, f.sim, 2, f.Nodes)
}

// TestLoadBalancerSharedStaleRequest: the service controller syncs
// several Services at once, so a sync that read the Nodes before one was
// deleted can reach the shared external service after a sync that wrote
// the set without it. It writes nothing: the pipeline takes the Node out
// of the request (it is gone from the informer the service controller
// reads, framework/lbnodes.go), instead of putting the node back until
// the deletion's own syncs take it out again.
func TestLoadBalancerSharedStaleRequest(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	f.AddNodes("node-c")
	deleted := make(chan struct{})
	f.LB = f.StartWithNodeInformer(t, cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { close(deleted) }})

	a, b := f.Service(t, "a", nil), f.Service(t, "b", nil)
	f.EnsureReady(t, a)
	f.EnsureReady(t, b)
	assertMembers(t, f.sim, 2, f.Nodes)

	before := slices.Clone(f.Nodes)
	if err := f.Kube.CoreV1().Nodes().Delete(f.Ctx, "node-c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, deleted, "the Node informer's deletion event")
	f.Nodes = slices.DeleteFunc(f.Nodes, func(n *corev1.Node) bool { return n.Name == "node-c" })
	writes := f.sim.Writes()
	if err := f.Update(t, a); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	if err := f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, b), before); err != nil {
		t.Fatalf("UpdateLoadBalancer with the Nodes of before the deletion: %v", err)
	}
	if err := f.Update(t, b); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	if w := f.sim.Writes() - writes; w != 1 {
		t.Errorf("a node leaving, with a sync older than its deletion among the new ones, made %d writes, want 1", w)
	}
	assertMembers(t, f.sim, 2, f.Nodes)
}

// TestLoadBalancerSharedRequestWaitingForTheLock: a sync made before a
// node joined, checked by the pipeline before any sync held the node,
// that then waits for the shared external service's lock behind the sync
// that adds the node, writes the joined set, not its older one. (At 1,000
// nodes and 200 load balancers the bench saw five PUTs for one node
// joining, the set going back and forth.)
func TestLoadBalancerSharedRequestWaitingForTheLock(t *testing.T) {
	var inWindow func()
	f := newLBFixture(t, frameworktest.LBOptions{NewProvider: func() framework.Provider {
		p := rancher.New()
		rancher.SetBeforeSharedLock(p, func() {
			if run := inWindow; run != nil {
				inWindow = nil
				run()
			}
		})
		return p
	}})
	joined := make(chan struct{})
	var once sync.Once
	f.LB = f.StartWithNodeInformer(t, cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if obj.(*corev1.Node).Name == "node-c" {
			once.Do(func() { close(joined) })
		}
	}})

	a, b := f.Service(t, "a", nil), f.Service(t, "b", nil)
	f.EnsureReady(t, a)
	f.EnsureReady(t, b)
	assertMembers(t, f.sim, 2, f.Nodes)

	before := slices.Clone(f.Nodes)
	f.CreateNode(t, f.AddNodes("node-c")[0]) // no InternalIP yet: its host's agent IP
	waitFor(t, joined, "the Node informer's add event")
	writes := f.sim.Writes()
	// b's sync with the node runs while a's, made before it, waits for
	// the lock; a's then takes it.
	inWindow = func() {
		if err := f.Update(t, b); err != nil {
			t.Errorf("UpdateLoadBalancer: %v", err)
		}
	}
	if err := f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, a), before); err != nil {
		t.Fatalf("UpdateLoadBalancer with the Nodes of before the join: %v", err)
	}
	if inWindow != nil {
		t.Fatal("the sync made before the join never waited for the shared external service's lock")
	}
	if w := f.sim.Writes() - writes; w != 1 {
		t.Errorf("a node joining, with a sync older than the join waiting for the lock, made %d writes, want 1", w)
	}
	assertMembers(t, f.sim, 2, f.Nodes)
}

// waitFor waits until ch is closed, failing t after ten seconds.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
