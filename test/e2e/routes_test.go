package e2e

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// testRoutes: with --configure-cloud-routes, every Node's pod CIDR gets a
// route in the cloud and the Node's NetworkUnavailable condition is
// cleared; a deleted Node's route goes away.
func testRoutes(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	if _, err := c.StartCCM("ccm", "--configure-cloud-routes=true", "--cluster-cidr=10.244.0.0/16", "--route-reconciliation-period=2s"); err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 2)
	want := map[string]string{"10.244.0.0/24": ids["node-0"], "10.244.1.0/24": ids["node-1"]}
	eventually(t, 60*time.Second, "a route per node in the cloud", func(context.Context) (bool, error) {
		return maps.Equal(c.Sim.Routes(), want), nil
	})
	eventually(t, 30*time.Second, "NetworkUnavailable cleared", func(ctx context.Context) (bool, error) {
		node, err := c.Kube.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeNetworkUnavailable {
				return cond.Status == corev1.ConditionFalse, nil
			}
		}
		return false, nil
	})

	c.Kubelet("node-1").Stop()
	if err := c.Kube.CoreV1().Nodes().Delete(t.Context(), "node-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	delete(want, "10.244.1.0/24")
	eventually(t, 60*time.Second, "node-1's route removed from the cloud", func(context.Context) (bool, error) {
		return maps.Equal(c.Sim.Routes(), want), nil
	})
}
