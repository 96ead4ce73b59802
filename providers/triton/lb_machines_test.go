package triton

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joyent/triton-go/compute"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestDrainCost: the drain controller looks at 1001 healthy nodes (a
// thousand joining, or a restarted CCM) for two machine lists (1000 a
// page) and no other call; a node turning NotReady then costs one write
// and no read; a restarted CCM pays the two lists again and writes
// nothing, the node being drained already.
func TestDrainCost(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var names []string
	for i := range 1001 {
		m := sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i), Tags: map[string]any{clusterTag: "test"}})
		names = append(names, m.Name)
		if err := nodes.Add(readyNode(m.Name, m.ID, corev1.ConditionTrue)); err != nil {
			t.Fatal(err)
		}
	}
	_, ctx := ktesting.NewTestContext(t)
	p := startForTest(ctx, t, sim)

	c := testDrainController(t, p, corelisters.NewNodeLister(nodes))
	stats := sim.Stats()
	for _, name := range names {
		if err := c.sync(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	wantCalls(t, sim, stats, map[string]int{"GET /{account}/machines": 2})

	sick := readyNode(names[7], machineIDOf(t, sim, names[7]), corev1.ConditionFalse)
	if err := nodes.Update(sick); err != nil {
		t.Fatal(err)
	}
	stats = sim.Stats()
	if err := c.sync(ctx, sick.Name); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, sim, stats, map[string]int{"POST /{account}/machines/{id}/metadata": 1})
	if m, _ := sim.Machine(machineIDOf(t, sim, sick.Name)); m.Metadata[cnsStatusMetadata] != cnsStatusDown {
		t.Errorf("NotReady node's machine has %s %q, want down", cnsStatusMetadata, m.Metadata[cnsStatusMetadata])
	}

	restarted := testDrainController(t, startForTest(ctx, t, sim), corelisters.NewNodeLister(nodes))
	stats = sim.Stats()
	for _, name := range names {
		if err := restarted.sync(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	wantCalls(t, sim, stats, map[string]int{"GET /{account}/machines": 2})
}

// startForTest starts the provider on sim in CNS mode for cluster "test".
func startForTest(ctx context.Context, t *testing.T, sim *tritonsim.Server) *Provider {
	t.Helper()
	vars := sim.Env(sim.URL())
	vars["TRITON_LB_MODE"] = modeCNS
	p := New()
	if _, err := framework.NewCloud(ctx, p, &framework.Env{
		ClusterName: "test",
		LookupEnv:   func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

func testDrainController(t *testing.T, p *Provider, nodes corelisters.NodeLister) *drainController {
	t.Helper()
	lbs, ok := p.lb.(*loadBalancers)
	if !ok {
		t.Fatalf("load balancers %T", p.lb)
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	t.Cleanup(q.ShutDown)
	return &drainController{api: p.api, machines: lbs.machines, codec: framework.Codec(p), nodes: nodes, queue: q, recheck: time.Hour}
}

func readyNode(name, id string, ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{ProviderID: "triton://" + id},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}},
	}
}

func machineIDOf(t *testing.T, sim *tritonsim.Server, name string) string {
	t.Helper()
	for _, m := range sim.Machines() {
		if m.Name == name {
			return m.ID
		}
	}
	t.Fatalf("no machine %s", name)
	return ""
}

// wantCalls checks the calls made since before, by operation: exactly
// want, and none other.
func wantCalls(t *testing.T, sim *tritonsim.Server, before, want map[string]int) {
	t.Helper()
	after := sim.Stats()
	for op := range maps.Keys(after) {
		if d := after[op] - before[op]; d != want[op] {
			t.Errorf("%d %s calls, want %d", d, op, want[op])
		}
	}
	for op, n := range want {
		if _, ok := after[op]; !ok && n != 0 {
			t.Errorf("no %s call, want %d", op, n)
		}
	}
}

// TestClusterMachinesRecords: concurrent callers share one list; a write
// recorded while a list runs wins over that list's stale answer, and a
// list that starts after it is believed.
func TestClusterMachinesRecords(t *testing.T) {
	var mu sync.Mutex
	lists := 0
	cloud := map[string]string{"a": "old"}
	count := func() int { mu.Lock(); defer mu.Unlock(); return lists }
	release := make(chan struct{})
	c := newClusterMachines("test", func(context.Context) ([]*compute.Instance, error) {
		mu.Lock()
		lists++
		snapshot := maps.Clone(cloud)
		mu.Unlock()
		<-release
		var out []*compute.Instance
		for id, v := range snapshot {
			out = append(out, machineWith(id, v))
		}
		return out, nil
	}, time.Hour)
	_, ctx := ktesting.NewTestContext(t)

	got := make(chan string, 3)
	for range 3 {
		go func() {
			m, err := c.get(ctx, "a")
			if err != nil || m == nil {
				got <- fmt.Sprint(m, err)
				return
			}
			got <- m.Metadata["v"]
		}()
	}
	// The list runs (with "old"); this process writes "new" meanwhile.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return count() == 1, nil }); err != nil {
		t.Fatal("the list did not start")
	}
	mu.Lock()
	cloud["a"] = "new"
	mu.Unlock()
	c.store(machineWith("a", "new"))
	close(release)
	for range 3 {
		if v := <-got; v != "new" {
			t.Errorf("machine a %q after the write, want new", v)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("%d lists for 3 concurrent callers, want 1", n)
	}

	// Someone else changes it; a fresh list sees that, the TTL's does not
	// need to.
	mu.Lock()
	cloud["a"] = "theirs"
	mu.Unlock()
	ms, err := c.all(ctx, true)
	if err != nil || len(ms) != 1 || ms[0].Metadata["v"] != "theirs" {
		t.Errorf("fresh list: %v, %v; want a=theirs", ms, err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d lists, want 2", n)
	}
	// A machine no longer tagged with the cluster leaves the list.
	c.store(&compute.Instance{ID: "a"})
	if m, err := c.get(ctx, "a"); m != nil || err != nil {
		t.Errorf("untagged machine a still listed: %v, %v", m, err)
	}
}

func machineWith(id, v string) *compute.Instance {
	return &compute.Instance{ID: id, Tags: map[string]any{clusterTag: "test"}, Metadata: map[string]string{"v": v}}
}

// TestFirstServiceOnUntaggedNodes: the first Service meets 50 nodes no load
// balancer has tagged, so none is in the cluster's list: they are read
// from one list of the account's machines (after a count), not a GET
// each, and each gets one tag write that keeps its user's entries.
func TestFirstServiceOnUntaggedNodes(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	var nodes []*corev1.Node
	for i := range 50 {
		m := sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i)})
		nodes = append(nodes, readyNode(m.Name, m.ID, corev1.ConditionTrue))
	}
	mine := machineIDOf(t, sim, "node-3")
	sim.SetTags(mine, map[string]any{cnsServicesTag: "web:8080"})
	_, ctx := ktesting.NewTestContext(t)
	p := startForTest(ctx, t, sim)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "0f1e2d3c-api"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
	}
	stats := sim.Stats()
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes); err != nil {
		t.Fatal(err)
	}
	// The cluster's machines (none yet), then the account's.
	wantCalls(t, sim, stats, map[string]int{"GET /{account}/machines": 2, "HEAD /{account}/machines": 1, "POST /{account}/machines/{id}/tags": 50})
	m, _ := sim.Machine(mine)
	if got := m.Tags[cnsServicesTag]; got != "web:8080,k8s-test-default-api:30080" {
		t.Errorf("node-3 services %q, want the user's entry kept", got)
	}

	// The next sync finds them all in the list it made: no call.
	stats = sim.Stats()
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, sim, stats, nil)
}

// A machine of the account whose triton.cns.disable is not a boolean (only
// a malformed answer has one) makes triton-go's list decoding panic: the
// sync that lists the account's machines fails with an error instead.
func TestMalformedTagsInTheAccountList(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	var nodes []*corev1.Node
	for i := range 5 {
		m := sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i)})
		nodes = append(nodes, readyNode(m.Name, m.ID, corev1.ConditionTrue))
	}
	odd := sim.AddMachine(tritonsim.Machine{Name: "not-a-node"})
	_, ctx := ktesting.NewTestContext(t)
	p := startForTest(ctx, t, sim)
	sim.SetTags(odd.ID, map[string]any{"triton.cns.disable": "yes"})
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "0f1e2d3c-api"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
	}
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("EnsureLoadBalancer: %v, want a malformed-response error", err)
	}
}

// A node deleted in the cloud since the shared list was made leaves its
// Service without an error: the write meets CloudAPI's 410, the machine
// leaves the list, and the next sync makes no call.
func TestDeletedNodeLeaves(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	var nodes []*corev1.Node
	for i := range 3 {
		m := sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i)})
		nodes = append(nodes, readyNode(m.Name, m.ID, corev1.ConditionTrue))
	}
	_, ctx := ktesting.NewTestContext(t)
	p := startForTest(ctx, t, sim)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "0f1e2d3c-api"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
	}
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes); err != nil {
		t.Fatal(err)
	}
	sim.DeleteMachine(machineIDOf(t, sim, "node-0"))
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes[1:]); err != nil {
		t.Fatalf("sync after node-0 was deleted: %v", err)
	}
	stats := sim.Stats()
	if _, err := p.lb.EnsureLoadBalancer(ctx, "test", svc, nodes[1:]); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, sim, stats, nil)
}

// TestMachinesShareServicesLists: every node of a cluster carries every
// Service's CNS entries, and the shared list keeps one copy of each
// distinct triton.cns.services list, as listed and as this process's own
// writes leave it.
func TestMachinesShareServicesLists(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	all := "k8s-a:30080,k8s-b:30081,k8s-c:30082"
	for i := range 3 {
		sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i), Tags: map[string]any{clusterTag: "test", cnsServicesTag: all}})
	}
	sim.AddMachine(tritonsim.Machine{Name: "node-3", Tags: map[string]any{clusterTag: "test", cnsServicesTag: "k8s-a:30080"}})
	_, ctx := ktesting.NewTestContext(t)
	p := startForTest(ctx, t, sim)
	lbs := p.lb.(*loadBalancers)
	ms, err := lbs.machines.all(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*compute.Instance{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	shared := &byName["node-0"].CNS.Services[0]
	for _, name := range []string{"node-1", "node-2"} {
		if s := byName[name].CNS.Services; strings.Join(s, ",") != all || &s[0] != shared {
			t.Fatalf("%s: services %q not shared with node-0's", name, s)
		}
	}
	if s := byName["node-3"].CNS.Services; strings.Join(s, ",") != "k8s-a:30080" || &s[0] == shared {
		t.Fatalf("node-3: services %q, want its own", s)
	}
	written := p.api.withTags(byName["node-3"], map[string]string{cnsServicesTag: all})
	if &written.CNS.Services[0] != shared {
		t.Fatal("a machine as a write leaves it does not share its services list")
	}
}
