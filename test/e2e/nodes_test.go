package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

const heartbeat = 2 * time.Second

// addNodes adds n VMs and their Nodes, and waits for the CCM to
// initialize them all. It returns the VMs' cloud IDs by node name.
func addNodes(t *testing.T, c *cluster.Cluster, prefix string, n int) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		id, err := c.AddNode(t.Context(), name, heartbeat)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	codec := framework.Codec(c.Provider.New())
	for name, id := range ids {
		eventually(t, 60*time.Second, "node "+name+" initialized", func(ctx context.Context) (bool, error) {
			node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return node.Spec.ProviderID == codec.Format(id) && !hasTaint(node, cloudproviderapi.TaintExternalCloudProvider), nil
		})
	}
	return ids
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func testNodeInitialization(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	// Node initialization itself never writes; the controllers that do on
	// their own are off here (and tested by their cloud's own e2e).
	var args []string
	if len(p.WritingControllers) > 0 {
		args = append(args, "--controllers=*,-"+strings.Join(p.WritingControllers, ",-"))
	}
	if _, err := c.StartCCM("ccm", args...); err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 3)

	// The node controller removes the taint first and sets the addresses
	// right after: wait for both.
	labels := []string{corev1.LabelTopologyRegion, corev1.LabelInstanceTypeStable}
	if !p.NoZone {
		labels = append(labels, corev1.LabelTopologyZone)
	}
	for name := range ids {
		eventually(t, 30*time.Second, "node "+name+" with its labels and an InternalIP", func(ctx context.Context) (bool, error) {
			node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, label := range labels {
				if node.Labels[label] == "" {
					return false, fmt.Errorf("label %s missing; labels %v", label, node.Labels)
				}
			}
			if !slices.ContainsFunc(node.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalIP }) {
				return false, fmt.Errorf("no InternalIP in %v", node.Status.Addresses)
			}
			return true, nil
		})
	}
	if w := c.Sim.Writes(); w != 0 {
		t.Errorf("initializing nodes made %d cloud writes, want 0", w)
	}
}

func testNodeLifecycle(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	if _, err := c.StartCCM("ccm"); err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 2)

	// The VM behind node-0 is deleted: its kubelet stops reporting, and
	// the CCM deletes the Node.
	c.Sim.DeleteInstance(ids["node-0"])
	if err := c.Kubelet("node-0").NotReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "node-0 deleted", func(ctx context.Context) (bool, error) {
		_, err := c.Kube.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	// The VM behind node-1 is shut down: the Node stays, tainted.
	c.Sim.ShutdownInstance(ids["node-1"])
	if err := c.Kubelet("node-1").NotReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "node-1 tainted as shut down", func(ctx context.Context) (bool, error) {
		node, err := c.Kube.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return hasTaint(node, cloudproviderapi.TaintNodeShutdown), nil
	})
}

// testAPIErrorsDoNotDeleteNodes: while the cloud API fails (500s, then
// 401s), a NotReady Node must stay through refusedSweeps sweeps of the
// node lifecycle controller, each of which asked the cloud whether the
// Node's VM exists and was refused. Then the VM really goes away and the
// Node is deleted, which shows the scenario can fail.
func testAPIErrorsDoNotDeleteNodes(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	// Without retries each sweep asks the cloud once and sees its answer
	// (the transport's retries are framework/cloudapi's to test): three
	// refused sweeps then take about three seconds, not three times the
	// retries' backoff.
	ccm, err := c.StartCCM("ccm", "--cloud-api-max-retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	// node-1 stays Ready: the Node whose VM the cloud then really deletes
	// has a peer the cloud still finds (the node-deletion guard keeps the
	// last Node of a cluster).
	ids := addNodes(t, c, "node", 2)
	if err := c.Kubelet("node-0").NotReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	nodeExists := func(ctx context.Context) error {
		_, err := c.Kube.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
		return err
	}
	for _, f := range []frameworktest.Fault{frameworktest.FaultServerError, frameworktest.FaultUnauthorized} {
		before := refusedChecks(ccm.Log(), "node-0")
		restore := c.Sim.Fail(f)
		what := fmt.Sprintf("%d lifecycle sweeps refused by the cloud API's %d", refusedSweeps, f.Status)
		eventually(t, 60*time.Second, what, func(ctx context.Context) (bool, error) {
			if err := nodeExists(ctx); err != nil {
				t.Fatalf("node-0 is gone while the cloud API answers %d: %v", f.Status, err)
			}
			return refusedChecks(ccm.Log(), "node-0")-before >= refusedSweeps, nil
		})
		if err := nodeExists(t.Context()); err != nil {
			t.Fatalf("node-0 is gone after %s: %v", what, err)
		}
		restore()
	}
	c.Sim.DeleteInstance(ids["node-0"])
	eventually(t, 60*time.Second, "node-0 deleted once its VM is really gone", func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(nodeExists(ctx)), nil
	})
}

// refusedSweeps is how many sweeps of the node lifecycle controller must
// see the cloud fail before testAPIErrorsDoNotDeleteNodes is satisfied: a
// CCM that took an error for "gone" deletes the Node on the first.
const refusedSweeps = 3

// refusedChecks counts the node lifecycle controller's sweeps that could
// not tell whether node's VM exists: it logs each
// (k8s.io/cloud-provider/controllers/nodelifecycle) and leaves the Node.
func refusedChecks(log, node string) int {
	return strings.Count(log, "error checking if node "+node+" exists")
}
