package framework

import (
	"fmt"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	servicecontroller "k8s.io/cloud-provider/controllers/service"
)

// lbNodes brings the Nodes of a load balancer request up to date with the
// Node informer the service controller lists them from (env.Informers).
//
// The service controller lists a request's Nodes when it makes the
// request, and makes up to --concurrent-service-syncs at once, from its
// node sync and from each Service's own sync: a request made before a Node
// joined can reach the cloud after one made after it. Where one write
// serves every load balancer (a DigitalOcean droplet tag, Rancher's shared
// external service) such a request undid the join and the next one
// redid it: at 1,000 load balancers, a node joining cost five tag writes.
// Per load balancer, it undoes the change until the node sync comes back.
//
// The service controller chooses the Nodes with predicates of the Node
// object alone (not being deleted, not excluded by label, not tainted for
// deletion by the cluster autoscaler), the same for every Service. So:
//
//   - a Node that some request held exactly as the informer holds it now
//     (same UID and resourceVersion) belongs in every request made now: a
//     request that lacks it, or holds an older version of it, is older
//     than that version and gets the informer's;
//   - a Node the informer no longer holds (or holds under another UID)
//     belongs in no request: it is taken out.
//
// A version that differs from a held one only outside what those
// predicates read, and the provider ID, counts as held too: a joining
// Node changes a few times after the request that first held it (the
// uninitialized taint goes, its addresses and conditions are set), and a
// request older than the join must not win because of that. (The service
// controller itself only syncs load balancers again when a Node's
// exclusion label or provider ID changes.)
//
// The pipeline applies this as a request comes in; a driver that writes
// one thing for every load balancer applies it again under that thing's
// lock (LoadBalancerRequest.CurrentNodes), since a request can wait there
// behind one made after it.
//
// Nothing else changes: a Node a request leaves out that no request held
// as it is now stays out, since only the service controller's predicates
// tell whether it belongs. Objects without a resourceVersion prove nothing.
type lbNodes struct {
	lister corelisters.NodeLister
	synced func() bool

	mu sync.Mutex
	// held maps a Node's name to the version of it that the latest
	// request holding its current version held.
	held map[string]*heldNode
	// gen counts requests; heldNode.gen is the last one that held the
	// Node, so the Nodes a request lacks are found without a set of its
	// names; marked counts the entries the current request held, so that
	// a request lacking none skips that search.
	gen    uint64
	marked int
}

type heldNode struct {
	uid types.UID
	rv  string
	// sum is membershipSum of the version held.
	sum uint64
	gen uint64
}

// stillHeld reports whether n is the held Node, in the held version or one
// that differs from it only where the predicates do not read. In the second
// case it records n's version as the held one, so that the next request
// holding n takes the resourceVersion comparison and skips the hash.
func (h *heldNode) stillHeld(n *corev1.Node) bool {
	if h.uid != n.UID || n.ResourceVersion == "" {
		return false
	}
	if h.rv == n.ResourceVersion {
		return true
	}
	if h.sum != membershipSum(n) {
		return false
	}
	h.rv = n.ResourceVersion
	return true
}

// membershipSum hashes what the service controller's Node predicates read
// (k8s.io/cloud-provider's stableNodeSetPredicates: the exclusion label,
// the cluster autoscaler's taint, deletionTimestamp) and the provider ID
// (which the service controller syncs on): the rest of the spec changes
// as a Node joins (the CCM takes the uninitialized taint off after the
// provider ID is set) without changing where it belongs.
func membershipSum(n *corev1.Node) uint64 {
	h := fnv.New64a()
	excluded, ok := n.Labels[corev1.LabelNodeExcludeBalancers]
	fmt.Fprintf(h, "%t\x00%s\x00%s\x00", ok, excluded, n.Spec.ProviderID)
	for _, t := range n.Spec.Taints {
		if t.Key == servicecontroller.ToBeDeletedTaint {
			h.Write([]byte("to-be-deleted\x00"))
		}
	}
	if n.DeletionTimestamp != nil {
		h.Write([]byte("deleted"))
	}
	return h.Sum64()
}

// newLBNodes reads f's Node informer; nil (requests are used as they
// come) without f.
func newLBNodes(f informers.SharedInformerFactory) *lbNodes {
	if f == nil {
		return nil
	}
	inf := f.Core().V1().Nodes()
	v := newLBNodesFrom(inf.Lister(), inf.Informer().HasSynced)
	// A deleted Node's entry goes at once: a request still holding it then
	// finds it missing from the informer, whatever version it holds.
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: v.forget})
	return v
}

func newLBNodesFrom(lister corelisters.NodeLister, synced func() bool) *lbNodes {
	return &lbNodes{lister: lister, synced: synced, held: map[string]*heldNode{}}
}

func (v *lbNodes) forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if n, ok := obj.(*corev1.Node); ok {
		v.mu.Lock()
		delete(v.held, n.Name)
		v.mu.Unlock()
	}
}

// current returns nodes brought up to date as the type says: nodes
// itself when nothing changes (the common case, which costs a map lookup
// per Node and no informer read), else a new slice; changed counts the
// Nodes added, replaced or taken out.
func (v *lbNodes) current(nodes []*corev1.Node) (out []*corev1.Node, changed int) {
	if v == nil || nodes == nil || !v.synced() {
		return nodes, 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gen, v.marked = v.gen+1, 0
	for i, n := range nodes {
		keep := v.node(n)
		if keep != n && out == nil {
			out = append(make([]*corev1.Node, 0, len(nodes)+1), nodes[:i]...)
		}
		if keep != n {
			changed++
		}
		if out != nil && keep != nil {
			out = append(out, keep)
		}
	}
	for name, h := range v.held {
		if v.marked == len(v.held) {
			break // every entry is one of the request's
		}
		if h.gen == v.gen {
			continue
		}
		cur, err := v.lister.Get(name)
		switch {
		case err == nil && h.stillHeld(cur):
			if out == nil {
				out = append(make([]*corev1.Node, 0, len(nodes)+1), nodes...)
			}
			out = append(out, cur)
			changed++
			v.mark(h)
		case err == nil || apierrors.IsNotFound(err):
			// Changed since a request held it (or gone): the entry can
			// prove nothing any more.
			v.drop(name, h)
		}
	}
	if out == nil {
		return nodes, 0
	}
	return out, changed
}

// node is what a request holding n holds now: n, the informer's version of
// n when a request held that one, or nil when the informer no longer
// holds n. It notes a request held n when n is the informer's version.
func (v *lbNodes) node(n *corev1.Node) *corev1.Node {
	h, ok := v.held[n.Name]
	if ok && h.uid == n.UID && h.rv == n.ResourceVersion {
		v.mark(h)
		return n
	}
	cur, err := v.lister.Get(n.Name)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return n
	case err != nil, n.UID != "" && cur.UID != "" && cur.UID != n.UID:
		v.drop(n.Name, h)
		return nil
	case ok && h.stillHeld(cur):
		v.mark(h)
		if cur.ResourceVersion == n.ResourceVersion {
			return n
		}
		return cur
	case n.ResourceVersion != "" && cur.UID == n.UID && cur.ResourceVersion == n.ResourceVersion:
		h = &heldNode{uid: n.UID, rv: n.ResourceVersion, sum: membershipSum(n)}
		v.held[n.Name] = h
		v.mark(h)
		return n
	}
	// n is older than the informer's version, which no request held yet.
	v.drop(n.Name, h)
	return n
}

// mark notes that the current request holds h's Node.
func (v *lbNodes) mark(h *heldNode) {
	if h.gen != v.gen {
		h.gen = v.gen
		v.marked++
	}
}

// drop deletes name's entry h (nil: none).
func (v *lbNodes) drop(name string, h *heldNode) {
	if h != nil && h.gen == v.gen {
		v.marked--
	}
	delete(v.held, name)
}
