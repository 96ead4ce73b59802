package frameworktest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
)

// guardNodes is how many Nodes testNodeDeletionGuard runs.
const guardNodes = 5

// testNodeDeletionGuard: with a valid credential of another account
// (AccountSwitcher), which finds none of the cluster's VMs, three sweeps
// over the cluster's NotReady Nodes delete none and warn on each; with the
// right credential every VM is found; then one VM deleted takes exactly
// its Node, and half of the rest deleted at once exactly theirs.
func testNodeDeletionGuard(t *testing.T, h Harness) {
	target := h.Setup(t)
	switcher, ok := accountsOf(target.Cloud)
	if !ok {
		t.Fatalf("the harness's Cloud (%T) is no AccountSwitcher: the case needs a second account of the cloud", target.Cloud)
	}
	_, ctx := ktesting.NewTestContext(t)
	kube := fake.NewClientset()
	ids := map[string]string{}
	codec := framework.Codec(target.Provider)
	for k := range guardNodes {
		name := fmt.Sprintf("guard-%d", k)
		ids[name] = target.Cloud.AddInstance(name)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec:   corev1.NodeSpec{ProviderID: codec.Format(ids[name])},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}}
		if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recorder := record.NewFakeRecorder(1000)
	// sweep asks, as the node lifecycle controller does for each NotReady
	// Node, whether its VM exists; it returns the Nodes reported gone.
	sweep := func(what string, tg *Target) (gone []string) {
		t.Helper()
		cloud, err := framework.NewCloud(ctx, tg.Provider, newEnv(t, tg, kube, recorder, variant{guard: true}))
		if err != nil {
			t.Fatalf("%s: framework.NewCloud: %v", what, err)
		}
		inst, ok := cloud.InstancesV2()
		if !ok {
			t.Skip("provider has no instances")
		}
		nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range nodes.Items {
			n := &nodes.Items[k]
			if exists, err := inst.InstanceExists(ctx, n); err == nil && !exists {
				gone = append(gone, n.Name)
			}
		}
		slices.Sort(gone)
		return gone
	}

	creds := switcher.OtherAccount()
	other := *target
	other.Env = map[string]string{}
	maps.Copy(other.Env, target.Env)
	maps.Copy(other.Env, creds.Env)
	if creds.CloudConfig != "" {
		other.CloudConfig = creds.CloudConfig
	}
	for range 3 {
		if gone := sweep("another account's credential", &other); len(gone) != 0 {
			t.Fatalf("with another account's credential, Nodes %v were reported gone; want none: the node-deletion guard", gone)
		}
	}
	warned := map[string]bool{}
	for _, e := range drain(recorder) {
		if strings.HasPrefix(e, corev1.EventTypeWarning+" "+framework.ReasonDeletionWithheld+" ") {
			for name := range ids {
				if strings.Contains(e, codec.Format(ids[name])) {
					warned[name] = true
				}
			}
		}
	}
	if len(warned) != guardNodes {
		t.Errorf("%s warnings name %d Nodes' VMs, want all %d", framework.ReasonDeletionWithheld, len(warned), guardNodes)
	}

	if gone := sweep("the right credential", target); len(gone) != 0 {
		t.Fatalf("with the right credential, Nodes %v were reported gone; want none", gone)
	}
	target.Cloud.DeleteInstance(ids["guard-1"])
	if gone := sweep("one VM deleted", target); !slices.Equal(gone, []string{"guard-1"}) {
		t.Fatalf("one VM deleted: gone %v, want [guard-1]", gone)
	}
	if err := kube.CoreV1().Nodes().Delete(ctx, "guard-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	target.Cloud.DeleteInstance(ids["guard-0"])
	target.Cloud.DeleteInstance(ids["guard-3"])
	if gone := sweep("half the VMs deleted", target); !slices.Equal(gone, []string{"guard-0", "guard-3"}) {
		t.Fatalf("half the VMs deleted at once: gone %v, want [guard-0 guard-3]", gone)
	}
}
