package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/providerid"
)

// The node-deletion guard (docs: README, "Node deletion guard"). The node
// lifecycle controller deletes a NotReady Node whose VM the cloud says
// does not exist. A valid credential of another account (a DigitalOcean
// team, an OpenStack project, a Rancher environment...) says that,
// authoritatively, of every VM of the cluster: rotated to one, a CCM would
// delete every Node that goes NotReady. So before the framework reports a
// Node's VM gone, it checks that the cloud still sees the cluster: that
// at least one of the cluster's other initialized Nodes' VMs exists.
//
// The rule, for a Node whose VM the cloud said is gone:
//
//  1. The peers are the cluster's other Nodes that the CCM initialized
//     (a providerID of this provider, no uninitialized taint) and that are
//     not being deleted, Ready ones first (their kubelets report, so their
//     VMs exist unless the cloud is blind to the cluster), then by name.
//  2. The cloud sees the cluster when a direct lookup of one of the first
//     GuardPeerLookups peers finds its VM, or, when all those say
//     not-found and the provider lists its instances, when one fresh list
//     holds any peer's VM. Then the Node's VM is gone: the Node is deleted
//     as before. A scale-down (a single VM, half the cluster at once)
//     leaves peers whose VMs exist, so their Nodes go in the same sweep.
//  3. When the cloud says none of them exist, or there are no peers (a
//     cluster of one Node), nothing is gone: the lookup is an error, which
//     keeps the Node, and the guard raises a Warning Event on the Node
//     (once per episode), one on the CCM's leader-election Lease naming
//     the likely cause, and sets the cloudprovider_node_deletion_withheld
//     gauge, until a check, or any lookup, finds a Node's VM again.
//  4. Any other answer (an error, a timeout) is an error: the Node stays,
//     as for any lookup the cloud did not answer.
//
// While the cluster is unseen, each check asks one peer directly (so that
// a restored credential ends the episode at the next check) and repeats
// the full check at most once per GuardRecheck.

const (
	// GuardPeerLookups is how many peers the guard looks up directly
	// before it lists.
	GuardPeerLookups = 3
	// GuardRecheck is how often, while the cloud cannot see the cluster,
	// the guard repeats its full check (the peer lookups and the list).
	GuardRecheck = 30 * time.Second
)

// Event reasons of the guard.
const (
	// ReasonDeletionWithheld is the Warning on a Node whose VM the cloud
	// said is gone while it sees none of the cluster's VMs.
	ReasonDeletionWithheld = "NodeDeletionWithheld"
	// ReasonCloudCannotSeeCluster is the Warning on the CCM's Lease when
	// an episode starts; ReasonCloudSeesCluster the Normal event when it
	// ends.
	ReasonCloudCannotSeeCluster = "CloudCannotSeeCluster"
	ReasonCloudSeesCluster      = "CloudSeesCluster"
)

// errClusterUnseen marks the error of a lookup whose not-found the guard
// withheld.
var errClusterUnseen = errors.New("the cloud sees none of the cluster's VMs")

// goneGuard decides whether a not-found may be reported as gone.
type goneGuard struct {
	provider string
	codec    providerid.Codec
	src      Instances
	nodes    func(ctx context.Context) ([]*corev1.Node, error)
	recorder record.EventRecorder
	lease    *corev1.ObjectReference
	now      func() time.Time

	mu        sync.Mutex
	unseen    bool      // an episode is on
	recheckAt time.Time // when the full check runs again, in an episode
	withheld  map[types.UID]bool
}

func newGoneGuard(provider string, codec providerid.Codec, src Instances, env *Env) *goneGuard {
	registerGuardMetrics()
	g := &goneGuard{provider: provider, codec: codec, src: src, recorder: env.Recorder, now: time.Now,
		nodes: nodeSource(env.Informers, env.Client), lease: leaseRef(env.LeaderElectionLease)}
	guardWithheld.WithLabelValues(provider).Set(0)
	return g
}

// nodeSource lists the cluster's Nodes from the shared informer (its cache
// serves the CCM's node controllers already) or, without one, from the API.
func nodeSource(f informers.SharedInformerFactory, client kubernetes.Interface) func(context.Context) ([]*corev1.Node, error) {
	if f != nil {
		lister := f.Core().V1().Nodes().Lister()
		return func(context.Context) ([]*corev1.Node, error) { return lister.List(labels.Everything()) }
	}
	return func(ctx context.Context) ([]*corev1.Node, error) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		out := make([]*corev1.Node, len(list.Items))
		for k := range list.Items {
			out[k] = &list.Items[k]
		}
		return out, nil
	}
}

// leaseRef is the object the guard's own Events name: the CCM's
// leader-election Lease (kube-system/cloud-controller-manager by default).
func leaseRef(n types.NamespacedName) *corev1.ObjectReference {
	if n.Name == "" {
		n.Name = "cloud-controller-manager"
	}
	if n.Namespace == "" {
		n.Namespace = metav1.NamespaceSystem
	}
	return &corev1.ObjectReference{APIVersion: coordinationv1.SchemeGroupVersion.String(), Kind: "Lease", Namespace: n.Namespace, Name: n.Name}
}

// confirm is called for node, whose VM the cloud said does not exist
// (notFound). It returns notFound when the cloud sees the cluster, and
// an error wrapping errClusterUnseen, or the error of the check, when not.
func (g *goneGuard) confirm(ctx context.Context, node *corev1.Node, notFound error) error {
	peers, err := g.peers(ctx, node)
	if err != nil {
		return fmt.Errorf("node %q: the cloud says its VM does not exist, but the cluster's other Nodes could not be listed to check that the cloud sees the cluster: %w", node.Name, err)
	}
	g.mu.Lock()
	quick := g.unseen && g.now().Before(g.recheckAt)
	g.mu.Unlock()
	ask := min(len(peers), GuardPeerLookups)
	if quick {
		ask = min(len(peers), 1)
	}
	seen, err := g.lookUp(ctx, peers[:ask])
	if err == nil && !seen && !quick && len(peers) > ask {
		seen, err = g.listed(ctx, peers)
	}
	switch {
	case err != nil:
		return fmt.Errorf("node %q: the cloud says its VM does not exist; checking that it sees the cluster's other Nodes' VMs: %w", node.Name, err)
	case seen:
		guardChecks.WithLabelValues(g.provider, "seen").Inc()
		g.end(ctx)
		return notFound
	}
	guardChecks.WithLabelValues(g.provider, "unseen").Inc()
	return g.withhold(ctx, node, len(peers), quick)
}

// peers are the Nodes the rule's step 1 names, Ready ones first.
func (g *goneGuard) peers(ctx context.Context, node *corev1.Node) ([]*corev1.Node, error) {
	all, err := g.nodes(ctx)
	if err != nil {
		return nil, err
	}
	var peers []*corev1.Node
	for _, n := range all {
		if n.Name == node.Name || n.DeletionTimestamp != nil || n.Spec.ProviderID == "" || hasTaint(n, cloudproviderapi.TaintExternalCloudProvider) {
			continue
		}
		if _, err := g.codec.Parse(n.Spec.ProviderID); err != nil {
			continue // another provider's Node, or a virtual one
		}
		peers = append(peers, n)
	}
	slices.SortFunc(peers, func(a, b *corev1.Node) int {
		if ra, rb := isReady(a), isReady(b); ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return peers, nil
}

// lookUp looks peers up directly, never from the instance cache (a list
// made with the credential before a rotation must not vouch for one made
// after it): true at the first whose VM the cloud finds.
func (g *goneGuard) lookUp(ctx context.Context, peers []*corev1.Node) (bool, error) {
	for _, p := range peers {
		id, _ := g.codec.Parse(p.Spec.ProviderID)
		_, err := g.src.InstanceByID(ctx, id.Value)
		switch {
		case err == nil:
			return true, nil
		case !IsNotFound(err):
			return false, fmt.Errorf("looking up node %q's VM: %w", p.Name, err)
		}
	}
	return false, nil
}

// listed reports whether one fresh list of the cloud's instances holds any
// peer's VM; false when the provider has no list.
func (g *goneGuard) listed(ctx context.Context, peers []*corev1.Node) (bool, error) {
	list, err := g.src.ListInstances(ctx)
	switch {
	case errors.Is(err, ErrNotImplemented):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("listing instances: %w", err)
	}
	ids := make(map[string]bool, len(list))
	for _, inst := range list {
		if inst != nil {
			ids[inst.ID] = true
		}
	}
	for _, p := range peers {
		if id, _ := g.codec.Parse(p.Spec.ProviderID); ids[id.Value] {
			return true, nil
		}
	}
	return false, nil
}

// withhold keeps node, raising the episode's Events and metric.
func (g *goneGuard) withhold(ctx context.Context, node *corev1.Node, peers int, quick bool) error {
	g.mu.Lock()
	starts := !g.unseen
	g.unseen = true
	if !quick {
		g.recheckAt = g.now().Add(GuardRecheck)
	}
	first := !g.withheld[node.UID]
	if g.withheld == nil {
		g.withheld = map[types.UID]bool{}
	}
	g.withheld[node.UID] = true
	n := len(g.withheld)
	g.mu.Unlock()
	guardWithheld.WithLabelValues(g.provider).Set(float64(n))

	why := fmt.Sprintf("the cloud says this Node's VM (%s) does not exist, and it finds none of the VMs of the cluster's %d other initialized Node(s) either", node.Spec.ProviderID, peers)
	cause := "the CCM's cloud credential is most likely valid for another account, project or environment than the cluster's (check the Secret it reads)"
	if peers == 0 {
		why = fmt.Sprintf("the cloud says this Node's VM (%s) does not exist, and the cluster has no other initialized Node to check the cloud's view against", node.Spec.ProviderID)
	}
	logger := klog.FromContext(ctx)
	if starts {
		logger.Error(errClusterUnseen, "Withholding node deletions: the cloud sees none of the cluster's VMs; "+cause, "node", klog.KObj(node), "peers", peers)
		g.event(g.lease, corev1.EventTypeWarning, ReasonCloudCannotSeeCluster,
			"Node deletions withheld: the cloud finds none of the VMs of the cluster's initialized Nodes; %s. Nodes are kept until the cloud sees them again.", cause)
	}
	if first {
		logger.Info("Keeping a Node whose VM the cloud says is gone", "node", klog.KObj(node), "reason", why)
		g.event(node, corev1.EventTypeWarning, ReasonDeletionWithheld, "Deletion withheld: %s; %s.", why, cause)
	}
	return fmt.Errorf("node %q: not deleting it: %s (%w)", node.Name, why, errClusterUnseen)
}

// end closes an episode: the cloud sees the cluster again (a check found
// a peer, or a lookup found a Node's VM).
func (g *goneGuard) end(ctx context.Context) {
	g.mu.Lock()
	was := g.unseen
	g.unseen, g.withheld = false, nil
	g.mu.Unlock()
	if !was {
		return
	}
	guardWithheld.WithLabelValues(g.provider).Set(0)
	klog.FromContext(ctx).Info("The cloud sees the cluster's VMs again; node deletions are no longer withheld")
	g.event(g.lease, corev1.EventTypeNormal, ReasonCloudSeesCluster, "The cloud sees the cluster's VMs again: node deletions are no longer withheld.")
}

func (g *goneGuard) event(obj runtime.Object, eventType, reason, format string, args ...any) {
	if g.recorder != nil {
		g.recorder.Eventf(obj, eventType, reason, format, args...)
	}
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

func isReady(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
}
