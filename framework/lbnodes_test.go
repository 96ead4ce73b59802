package framework

import (
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// informerNodes is a Node lister over an indexer the test fills, standing
// for the informer the service controller lists Nodes from.
type informerNodes struct{ store cache.Indexer }

func newInformerNodes() *informerNodes {
	return &informerNodes{store: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
}

func (f *informerNodes) lister() corelisters.NodeLister { return corelisters.NewNodeLister(f.store) }

// set stores name at rv (UID uid-<name>) and returns it.
func (f *informerNodes) set(t testing.TB, name, rv, providerID string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := f.store.Update(n); err != nil {
		t.Fatal(err)
	}
	return n
}

func nodeVersions(nodes []*corev1.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name+"@"+n.ResourceVersion)
	}
	slices.Sort(out)
	return out
}

func synced() bool { return true }

// TestLBNodesRequestOlderThanAJoin: a request made before a Node joined
// (lacking it, or holding it before it had a provider ID) reaches the
// pipeline after one made after: it gets the Node as the later one held
// it, instead of taking it off the load balancers until the next sync.
func TestLBNodesRequestOlderThanAJoin(t *testing.T) {
	inf := newInformerNodes()
	a, b := inf.set(t, "a", "1", "sim://a"), inf.set(t, "b", "2", "sim://b")
	cOld := inf.set(t, "c", "3", "")
	older := []*corev1.Node{a, b, cOld} // c before the CCM initialized it
	oldest := []*corev1.Node{a, b}      // before c was created
	c := inf.set(t, "c", "4", "sim://c")
	v := newLBNodesFrom(inf.lister(), synced)

	now := []*corev1.Node{a, b, c}
	if got, changed := v.current(now); changed != 0 || &got[0] != &now[0] {
		t.Fatalf("an up-to-date request: changed %d, %v", changed, nodeVersions(got))
	}
	got, changed := v.current(oldest)
	if want := []string{"a@1", "b@2", "c@4"}; changed != 1 || !slices.Equal(nodeVersions(got), want) {
		t.Errorf("a request older than the Node: changed %d, %v, want %v", changed, nodeVersions(got), want)
	}
	got, changed = v.current(older)
	if want := []string{"a@1", "b@2", "c@4"}; changed != 1 || !slices.Equal(nodeVersions(got), want) || got[2].Spec.ProviderID != "sim://c" {
		t.Errorf("a request holding an older version: changed %d, %v, want %v", changed, nodeVersions(got), want)
	}
	if nodeVersions(older)[2] != "c@3" || len(oldest) != 2 {
		t.Error("the request's own slice was changed")
	}

	// c's status changes (its addresses, its Ready condition) after the
	// request that held it: what the service controller's predicates read
	// is as held, so older requests still get c, in its last version.
	c5 := inf.set(t, "c", "5", "sim://c")
	c5.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.3"}}
	for _, req := range [][]*corev1.Node{oldest, older, {a, b, c}} {
		got, _ := v.current(req)
		if want := []string{"a@1", "b@2", "c@5"}; !slices.Equal(nodeVersions(got), want) {
			t.Errorf("request %v after a status change: %v, want %v", nodeVersions(req), nodeVersions(got), want)
		}
	}
	// The uninitialized taint goes, a label comes: still as held.
	c6 := inf.set(t, "c", "6", "sim://c")
	c6.Labels = map[string]string{"topology.kubernetes.io/zone": "z1"}
	if got, _ := v.current(oldest); !slices.Equal(nodeVersions(got), []string{"a@1", "b@2", "c@6"}) {
		t.Errorf("after the CCM's labels, a request lacking c: %v", nodeVersions(got))
	}
	// What the predicates read changes: no longer as held.
	for _, change := range []func(*corev1.Node){
		func(n *corev1.Node) { n.Labels = map[string]string{corev1.LabelNodeExcludeBalancers: "true"} },
		func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "ToBeDeletedByClusterAutoscaler", Effect: corev1.TaintEffectNoSchedule}}
		},
		func(n *corev1.Node) { n.DeletionTimestamp = &metav1.Time{} },
	} {
		held := inf.set(t, "c", "6", "sim://c")
		if got, _ := v.current([]*corev1.Node{a, b, held}); len(got) != 3 {
			t.Fatalf("c@6 not held: %v", nodeVersions(got))
		}
		c7 := inf.set(t, "c", "7", "sim://c")
		change(c7)
		if got, _ := v.current(oldest); !slices.Equal(nodeVersions(got), []string{"a@1", "b@2"}) {
			t.Errorf("after a change the predicates read, a request lacking c: %v", nodeVersions(got))
		}
	}
}

// TestLBNodesDeleted: a Node the informer no longer holds, or holds under
// another UID, is taken out of a request that still holds it; a deletion
// seen by the informer's handler is forgotten at once.
func TestLBNodesDeleted(t *testing.T) {
	inf := newInformerNodes()
	a, b, c := inf.set(t, "a", "1", "sim://a"), inf.set(t, "b", "2", "sim://b"), inf.set(t, "c", "3", "sim://c")
	v := newLBNodesFrom(inf.lister(), synced)
	before := []*corev1.Node{a, b, c}
	v.current(before)

	if err := inf.store.Delete(c); err != nil {
		t.Fatal(err)
	}
	v.forget(cache.DeletedFinalStateUnknown{Key: "c", Obj: c})
	got, changed := v.current(before)
	if want := []string{"a@1", "b@2"}; changed != 1 || !slices.Equal(nodeVersions(got), want) {
		t.Errorf("a request holding a deleted Node: changed %d, %v, want %v", changed, nodeVersions(got), want)
	}

	// b deleted and made again under the same name: the request's b is
	// the deleted one.
	if err := inf.store.Update(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "another", ResourceVersion: "9"}}); err != nil {
		t.Fatal(err)
	}
	v.forget(b)
	got, _ = v.current([]*corev1.Node{a, b})
	if want := []string{"a@1"}; !slices.Equal(nodeVersions(got), want) {
		t.Errorf("a request holding a Node since made again: %v, want %v", nodeVersions(got), want)
	}
}

// TestLBNodesOnlyWhatARequestHeld: only the service controller's
// predicates tell whether a Node belongs, so a Node a request leaves out
// stays out unless a request held it as it is now: changed since (say,
// labelled out of load balancers), or never held, it is not added, and a
// request holding an older version of it keeps that.
func TestLBNodesOnlyWhatARequestHeld(t *testing.T) {
	inf := newInformerNodes()
	a, b := inf.set(t, "a", "1", "sim://a"), inf.set(t, "b", "2", "sim://b")
	v := newLBNodesFrom(inf.lister(), synced)
	v.current([]*corev1.Node{a, b})

	excluded := inf.set(t, "b", "5", "sim://b") // changed since: excluded
	excluded.Labels = map[string]string{corev1.LabelNodeExcludeBalancers: "true"}
	inf.set(t, "c", "6", "sim://c")     // never in a request
	d := inf.set(t, "d", "", "sim://d") // no resourceVersion: proves nothing
	v.current([]*corev1.Node{a, d})
	for _, req := range [][]*corev1.Node{{a}, {a, b}} {
		got, changed := v.current(req)
		if changed != 0 || !slices.Equal(nodeVersions(got), nodeVersions(req)) {
			t.Errorf("request %v: changed %d, %v", nodeVersions(req), changed, nodeVersions(got))
		}
	}
}

// TestLBNodesWithoutInformer: without a synced informer requests are used
// as they come.
func TestLBNodesWithoutInformer(t *testing.T) {
	var none *lbNodes
	nodes := []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	if got, changed := none.current(nodes); changed != 0 || len(got) != 1 {
		t.Errorf("nil: %d, %v", changed, got)
	}
	v := newLBNodesFrom(newInformerNodes().lister(), func() bool { return false })
	if got, changed := v.current(nodes); changed != 0 || len(got) != 1 {
		t.Errorf("not synced: %d, %v", changed, got)
	}
}

// BenchmarkLBNodesCurrent is the pipeline's cost per request at 5,000
// Nodes when the request is up to date (every sync of a node sync, and
// every Service's own): a map lookup per Node, no informer read, no
// allocation.
func BenchmarkLBNodesCurrent(b *testing.B) {
	inf := newInformerNodes()
	nodes := make([]*corev1.Node, 5000)
	for i := range nodes {
		nodes[i] = inf.set(b, "node-"+strconv.Itoa(i), strconv.Itoa(i+1), "sim://"+strconv.Itoa(i))
	}
	v := newLBNodesFrom(inf.lister(), synced)
	v.current(nodes)
	b.ReportAllocs()
	for b.Loop() {
		if _, changed := v.current(nodes); changed != 0 {
			b.Fatal("changed")
		}
	}
}

// TestLoadBalancerRequestCurrentNodes: a request that passed the
// pipeline's check before any request held a joining Node, and then
// waited for a driver's lock behind one that did, gets the Node when the
// driver asks again under the lock.
func TestLoadBalancerRequestCurrentNodes(t *testing.T) {
	inf := newInformerNodes()
	a, b, c := inf.set(t, "a", "1", "sim://a"), inf.set(t, "b", "2", "sim://b"), inf.set(t, "c", "4", "sim://c")
	v := newLBNodesFrom(inf.lister(), synced)
	older := &LoadBalancerRequest[struct{}]{Nodes: []*corev1.Node{a, b}, fresh: v}
	if got := nodeVersions(older.CurrentNodes()); !slices.Equal(got, []string{"a@1", "b@2"}) {
		t.Fatalf("before any request held c: %v", got)
	}
	v.current([]*corev1.Node{a, b, c}) // the request made after the join, first to the lock
	if got := nodeVersions(older.CurrentNodes()); !slices.Equal(got, []string{"a@1", "b@2", "c@4"}) {
		t.Errorf("under the lock, after a request held c: %v", got)
	}
	none := &LoadBalancerRequest[struct{}]{Nodes: []*corev1.Node{a}}
	if got := nodeVersions(none.CurrentNodes()); !slices.Equal(got, []string{"a@1"}) {
		t.Errorf("without an informer: %v", got)
	}
}
