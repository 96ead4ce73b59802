package kubetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// NodeSpec is what differs between the nodes a Kubelet registers.
type NodeSpec struct {
	// Name is the node name and its hostname; for the CCM to find the
	// instance by name it matches the cloud instance's name.
	Name string
	// PodCIDR is set as spec.podCIDR and spec.podCIDRs ("a,b" for dual
	// stack). In a cluster kube-controller-manager's node IPAM sets it; the
	// CCM's route controller needs one.
	PodCIDR string
	// ProvidedIP is kubelet's --node-ip: it becomes the
	// alpha.kubernetes.io/provided-node-ip annotation and the initial
	// InternalIP address.
	ProvidedIP string
	// Labels are kubelet's --node-labels.
	Labels map[string]string
}

// Kubelet stands in for a kubelet running with --cloud-provider=external:
// it registers its Node as kubelet v1.37 does (see initialNode), then renews
// its Lease in kube-node-lease every heartbeat and re-posts its conditions
// every statusEvery heartbeats, as kubelet's lease controller and status
// loop do. Heartbeats patch status conditions only, so they never touch
// what the CCM owns (addresses, taints, labels, providerID).
//
// It also does what kube-controller-manager's node lifecycle controller,
// which these tests do not run, would do to the node: it removes the
// node.kubernetes.io/not-ready taint the TaintNodesByCondition admission
// plugin puts on every new Node once the node is Ready, and NotReady marks
// the node as that controller does after the grace period.
type Kubelet struct {
	client    kubernetes.Interface
	name      string
	heartbeat time.Duration
	logger    klog.Logger

	// node and lease are the last copies read or written; after start
	// only the heartbeat goroutine uses them.
	node  *corev1.Node
	lease *coordinationv1.Lease

	mu     sync.Mutex // guards cancel
	cancel context.CancelFunc
	done   chan struct{}
}

// statusEvery is how many heartbeats pass between two status posts
// (kubelet: a 10s lease renewal, a status report at least every 5m).
const statusEvery = 5

// StartKubelet registers spec's Node and heartbeats until ctx is done or
// Stop. For a Node that exists, it posts Ready status instead, as a
// restarted kubelet does; spec's labels, pod CIDR and node IP are then
// not applied again. heartbeat 0 means no heartbeats: the node is Ready once and
// has no Lease, which is what a benchmark registering many nodes wants. The
// client's rate limit applies: use an unthrottled one for many nodes.
func StartKubelet(ctx context.Context, client kubernetes.Interface, spec NodeSpec, heartbeat time.Duration) (*Kubelet, error) {
	if spec.Name == "" {
		return nil, errors.New("node name is empty")
	}
	k := &Kubelet{
		client:    client,
		name:      spec.Name,
		heartbeat: heartbeat,
		logger:    klog.FromContext(ctx).WithValues("node", spec.Name),
	}
	ctx = klog.NewContext(ctx, k.logger)
	if err := k.register(ctx, spec); err != nil {
		return nil, err
	}
	if heartbeat > 0 {
		if err := k.renewLease(ctx); err != nil {
			return nil, err
		}
		k.startHeartbeats(ctx)
	}
	return k, nil
}

// Name is the node name.
func (k *Kubelet) Name() string { return k.name }

// register creates the Node, or finds it and posts Ready status as a
// restarted kubelet does; then it removes the taints
// kube-controller-manager removes from a Ready node: node.kubernetes.io/
// not-ready, which admission adds to every new Node, and
// node.kubernetes.io/unreachable, which NotReady adds.
func (k *Kubelet) register(ctx context.Context, spec NodeSpec) error {
	node, err := k.client.CoreV1().Nodes().Create(ctx, initialNode(spec, time.Now()), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		if node, err = k.client.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("getting node %s: %w", spec.Name, err)
		}
		if err := k.patchConditions(ctx, heartbeatConditions(time.Now(), node)); err != nil {
			return err
		}
		k.logger.V(2).Info("Node was previously registered, posted Ready status")
	case err != nil:
		return fmt.Errorf("registering node %s: %w", spec.Name, err)
	default:
		k.logger.V(2).Info("Registered node")
	}
	k.node, err = k.updateTaints(ctx, node, func(taints []corev1.Taint) []corev1.Taint {
		return slices.DeleteFunc(taints, func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable
		})
	})
	return err
}

// updateTaints applies edit to the node's taints with optimistic
// concurrency, retrying on conflict with a fresh copy. node may be nil.
func (k *Kubelet) updateTaints(ctx context.Context, node *corev1.Node, edit func([]corev1.Taint) []corev1.Taint) (*corev1.Node, error) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node == nil {
			var err error
			if node, err = k.client.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		taints := edit(slices.Clone(node.Spec.Taints))
		if slices.EqualFunc(taints, node.Spec.Taints, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) }) {
			return nil
		}
		updated := node.DeepCopy()
		updated.Spec.Taints = taints
		var err error
		if updated, err = k.client.CoreV1().Nodes().Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			node = nil
			return err
		}
		node = updated
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("updating taints of node %s: %w", k.name, err)
	}
	return node, nil
}

func (k *Kubelet) startHeartbeats(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	k.cancel, k.done = cancel, make(chan struct{})
	beats := 0
	go func() {
		defer close(k.done)
		// Jitter spreads many kubelets' heartbeats over the period.
		wait.JitterUntilWithContext(ctx, func(ctx context.Context) {
			beats++
			if beats == 1 {
				return // registration just posted status and the lease
			}
			if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
				k.logger.Error(err, "Renewing the node lease")
			}
			if beats%statusEvery == 0 {
				if err := k.postStatus(ctx); err != nil && ctx.Err() == nil {
					k.logger.Error(err, "Posting node status")
				}
			}
		}, k.heartbeat, 0.1, true)
	}()
}

// renewLease updates the Lease's renew time, creating the Lease if it is
// missing, as kubelet's node lease controller does.
func (k *Kubelet) renewLease(ctx context.Context) error {
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	duration := max(int32(4*k.heartbeat/time.Second), NodeLeaseDurationSeconds)
	if k.lease == nil {
		lease, err := leases.Create(ctx, nodeLease(k.node, duration, time.Now()), metav1.CreateOptions{})
		if err == nil {
			k.lease = lease
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating lease %s/%s: %w", corev1.NamespaceNodeLease, k.name, err)
		}
		if k.lease, err = leases.Get(ctx, k.name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("getting lease %s/%s: %w", corev1.NamespaceNodeLease, k.name, err)
		}
	}
	lease := k.lease.DeepCopy()
	lease.Spec.HolderIdentity = &k.name
	lease.Spec.LeaseDurationSeconds = &duration
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	updated, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		k.lease = nil // re-read or re-create on the next beat
		return fmt.Errorf("renewing lease %s/%s: %w", corev1.NamespaceNodeLease, k.name, err)
	}
	k.lease = updated
	return nil
}

// postStatus refreshes the heartbeat time of kubelet's conditions with a
// strategic merge patch of the status subresource: conditions merge by
// type, so the CCM's (NetworkUnavailable) and every other field stay.
func (k *Kubelet) postStatus(ctx context.Context) error {
	return k.patchConditions(ctx, heartbeatConditions(time.Now(), nil))
}

func (k *Kubelet) patchConditions(ctx context.Context, conds []conditionPatch) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	_, err = k.client.CoreV1().Nodes().Patch(ctx, k.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patching status of node %s: %w", k.name, err)
	}
	return nil
}

// NotReady stops the heartbeats and marks the node as
// kube-controller-manager's node lifecycle controller does once the node
// stopped posting status for --node-monitor-grace-period: every kubelet
// condition Unknown ("Kubelet stopped posting node status."), and the
// node.kubernetes.io/unreachable NoSchedule and NoExecute taints.
func (k *Kubelet) NotReady(ctx context.Context) error {
	k.Stop()
	if err := k.patchConditions(ctx, unknownConditions(time.Now())); err != nil {
		return err
	}
	now := metav1.Now()
	unreachable := []corev1.Taint{
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now},
	}
	_, err := k.updateTaints(ctx, nil, func(taints []corev1.Taint) []corev1.Taint {
		for _, u := range unreachable {
			if !slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&u) }) {
				taints = append(taints, u)
			}
		}
		return taints
	})
	k.logger.V(2).Info("Node marked not ready")
	return err
}

// Stop stops the heartbeats, as when the machine is switched off or
// deleted; the Node and its Lease stay. It waits for a heartbeat in flight
// and is safe to call more than once.
func (k *Kubelet) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel == nil {
		return
	}
	k.cancel()
	<-k.done
	k.cancel = nil
}
