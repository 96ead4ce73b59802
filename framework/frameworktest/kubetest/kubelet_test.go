package kubetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
)

const uninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"

// TestKubeletRegistersNodeAsExternalCloudKubelet checks the registered
// Node without an API server: what a kubelet with --cloud-provider=external
// and --node-ip posts.
func TestKubeletRegistersNodeAsExternalCloudKubelet(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientset()
	k, err := kubetest.StartKubelet(ctx, c, kubetest.NodeSpec{
		Name: "node-a", PodCIDR: "10.244.1.0/24,fd00:1::/64", ProvidedIP: "10.0.0.5",
		Labels: map[string]string{"example.com/pool": "blue"},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	node, err := c.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		"kubernetes.io/hostname": "node-a", "kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": node.Labels["kubernetes.io/arch"], "beta.kubernetes.io/arch": node.Labels["kubernetes.io/arch"],
		"example.com/pool": "blue",
	}
	if diff := cmp.Diff(wantLabels, node.Labels); diff != "" || node.Labels["kubernetes.io/arch"] == "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got := node.Annotations["alpha.kubernetes.io/provided-node-ip"]; got != "10.0.0.5" {
		t.Errorf("provided-node-ip annotation = %q", got)
	}
	wantTaints := []corev1.Taint{{Key: uninitializedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(wantTaints, node.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if node.Spec.ProviderID != "" {
		t.Errorf("providerID = %q, want none: the CCM sets it", node.Spec.ProviderID)
	}
	if node.Spec.PodCIDR != "10.244.1.0/24" || !slices.Equal(node.Spec.PodCIDRs, []string{"10.244.1.0/24", "fd00:1::/64"}) {
		t.Errorf("podCIDR %q, podCIDRs %v", node.Spec.PodCIDR, node.Spec.PodCIDRs)
	}
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "node-a"}}
	if diff := cmp.Diff(wantAddrs, node.Status.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	if ready := condition(node, corev1.NodeReady); ready.Status != corev1.ConditionTrue || ready.LastHeartbeatTime.IsZero() {
		t.Errorf("Ready = %+v", ready)
	}
	if node.Status.NodeInfo.KubeletVersion != kubetest.KubeletVersion || node.Status.Capacity.Pods().Value() != 110 {
		t.Errorf("nodeInfo %+v, capacity %v", node.Status.NodeInfo, node.Status.Capacity)
	}
	if leases, _ := c.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{}); len(leases.Items) != 0 {
		t.Errorf("heartbeat 0 made %d leases", len(leases.Items))
	}
}

func TestKubeletWithoutNodeIPReportsOnlyHostname(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientset()
	if _, err := kubetest.StartKubelet(ctx, c, kubetest.NodeSpec{Name: "node-b"}, 0); err != nil {
		t.Fatal(err)
	}
	node, _ := c.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
	if diff := cmp.Diff([]corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-b"}}, node.Status.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	if _, ok := node.Annotations["alpha.kubernetes.io/provided-node-ip"]; ok {
		t.Error("provided-node-ip annotation without a node IP")
	}
}

// TestKubeletAgainstAPIServer runs the heartbeats against a real API
// server: admission, strategic merge patches and the status subresource
// are the real ones.
func TestKubeletAgainstAPIServer(t *testing.T) {
	requireControlPlane(t)
	_, ctx := ktesting.NewTestContext(t)
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{})
	c := cp.AdminClient()

	const beat = 200 * time.Millisecond
	k, err := kubetest.StartKubelet(ctx, c, kubetest.NodeSpec{Name: "node-a", ProvidedIP: "10.0.0.5"}, beat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	node := getNode(t, c, "node-a")
	// Admission added node.kubernetes.io/not-ready; the Kubelet removed it as
	// kube-controller-manager does for a Ready node.
	if got := taintKeys(node); !slices.Equal(got, []string{uninitializedTaint}) {
		t.Errorf("taints after registration = %v, want only %s", got, uninitializedTaint)
	}
	registered := condition(node, corev1.NodeReady).LastHeartbeatTime

	// What the CCM does: providerID, labels, addresses, taint removal.
	ccmInitialize(t, c, "node-a")

	firstRenew := lease(t, c, "node-a").Spec.RenewTime.Time
	waitFor(t, "the lease is renewed", func(ctx context.Context) (bool, error) {
		return lease(t, c, "node-a").Spec.RenewTime.After(firstRenew), nil
	})
	waitFor(t, "the Ready heartbeat advances", func(ctx context.Context) (bool, error) {
		return condition(getNode(t, c, "node-a"), corev1.NodeReady).LastHeartbeatTime.After(registered.Time), nil
	})
	node = getNode(t, c, "node-a")
	if node.Spec.ProviderID != "skeleton://i-1" || len(node.Spec.Taints) != 0 || node.Labels["topology.kubernetes.io/zone"] != "z1" {
		t.Errorf("heartbeats undid the CCM's work: providerID %q, taints %v, labels %v", node.Spec.ProviderID, node.Spec.Taints, node.Labels)
	}
	if got := node.Status.Addresses; len(got) != 1 || got[0].Address != "203.0.113.9" {
		t.Errorf("heartbeats changed the CCM's addresses: %v", got)
	}
	if nu := condition(node, corev1.NodeNetworkUnavailable); nu.Status != corev1.ConditionFalse {
		t.Errorf("heartbeats dropped the CCM's NetworkUnavailable condition: %+v", nu)
	}

	if err := k.NotReady(ctx); err != nil {
		t.Fatal(err)
	}
	node = getNode(t, c, "node-a")
	ready := condition(node, corev1.NodeReady)
	if ready.Status != corev1.ConditionUnknown || ready.Reason != "NodeStatusUnknown" || ready.Message != "Kubelet stopped posting node status." {
		t.Errorf("Ready after NotReady = %+v", ready)
	}
	if ready.LastHeartbeatTime.IsZero() {
		t.Error("NotReady erased the last heartbeat time")
	}
	if got := taintKeys(node); !slices.Equal(got, []string{"node.kubernetes.io/unreachable", "node.kubernetes.io/unreachable"}) {
		t.Errorf("taints after NotReady = %v, want the unreachable NoSchedule and NoExecute taints", got)
	}
	stopped := lease(t, c, "node-a").Spec.RenewTime.Time
	time.Sleep(3 * beat) // proving an absence: nothing to poll for
	if renewed := lease(t, c, "node-a").Spec.RenewTime.Time; !renewed.Equal(stopped) {
		t.Errorf("lease renewed after NotReady: %v -> %v", stopped, renewed)
	}

	// A restarted kubelet (a rebooted machine) finds its Node and brings it
	// back: Ready, with a new transition time, and no unreachable taints.
	again, err := kubetest.StartKubelet(ctx, c, kubetest.NodeSpec{Name: "node-a"}, 0)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	again.Stop()
	node = getNode(t, c, "node-a")
	if back := condition(node, corev1.NodeReady); back.Status != corev1.ConditionTrue || back.LastTransitionTime.Before(&ready.LastTransitionTime) {
		t.Errorf("Ready after restart = %+v", back)
	}
	if len(node.Spec.Taints) != 0 || node.Spec.ProviderID != "skeleton://i-1" {
		t.Errorf("after restart: taints %v, providerID %q; want no taints and the CCM's providerID", node.Spec.Taints, node.Spec.ProviderID)
	}
}

func TestRegisterNodes(t *testing.T) {
	requireControlPlane(t)
	_, ctx := ktesting.NewTestContext(t)
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{})
	specs := make([]kubetest.NodeSpec, 100)
	for i := range specs {
		specs[i] = kubetest.NodeSpec{Name: fmt.Sprintf("node-%03d", i), PodCIDR: fmt.Sprintf("10.244.%d.0/24", i)}
	}
	start := time.Now()
	kubelets, err := kubetest.RegisterNodes(ctx, cp.AdminClient(), specs, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("registered %d nodes in %s", len(kubelets), time.Since(start))
	nodes, err := cp.AdminClient().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(specs) {
		t.Fatalf("%d nodes, want %d", len(nodes.Items), len(specs))
	}
	for _, n := range nodes.Items {
		if got := taintKeys(&n); !slices.Equal(got, []string{uninitializedTaint}) {
			t.Errorf("%s taints = %v", n.Name, got)
		}
	}
	if _, err := kubetest.RegisterNodes(ctx, cp.AdminClient(), []kubetest.NodeSpec{{Name: ""}}, 0); err == nil {
		t.Error("RegisterNodes accepted a node without a name")
	}
}

// ccmInitialize does to a node what a CCM's node and route controllers do.
func ccmInitialize(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	patch(t, c, name, types.StrategicMergePatchType, map[string]any{
		"metadata": map[string]any{"labels": map[string]string{"topology.kubernetes.io/zone": "z1"}},
		"spec":     map[string]any{"providerID": "skeleton://i-1", "taints": []corev1.Taint{}},
	})
	// A merge patch replaces the whole list, as the CCM's computed patch does.
	patch(t, c, name, types.MergePatchType, map[string]any{"status": map[string]any{
		"addresses": []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.9"}},
	}}, "status")
	now := metav1.Now()
	patch(t, c, name, types.StrategicMergePatchType, map[string]any{"status": map[string]any{
		"conditions": []corev1.NodeCondition{{
			Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated",
			Message: "RouteController created a route", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	}}, "status")
}

func patch(t *testing.T, c kubernetes.Interface, name string, pt types.PatchType, body any, subresources ...string) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Nodes().Patch(t.Context(), name, pt, data, metav1.PatchOptions{}, subresources...); err != nil {
		t.Fatal(err)
	}
}

func getNode(t *testing.T, c kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func lease(t *testing.T, c kubernetes.Interface, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := c.CoordinationV1().Leases("kube-node-lease").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.RenewTime == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != name || len(l.OwnerReferences) != 1 {
		t.Fatalf("lease %s is not a kubelet's: %+v", name, l)
	}
	return l
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func taintKeys(n *corev1.Node) []string {
	var keys []string
	for _, t := range n.Spec.Taints {
		keys = append(keys, t.Key)
	}
	return keys
}

// waitTimeout bounds every waitFor.
var waitTimeout = 30 * time.Second

// waitFor polls cond every 100ms until it holds, for up to waitTimeout.
func waitFor(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, cond); err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}
