package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

const lbFinalizer = "service.kubernetes.io/load-balancer-cleanup"

func createLBService(t *testing.T, c *cluster.Cluster, name string, port int32) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	svc, err := c.Kube.CoreV1().Services(c.Namespace).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func getService(ctx context.Context, c *cluster.Cluster, name string) (*corev1.Service, error) {
	return c.Kube.CoreV1().Services(c.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// waitForIngress waits until the Service has its finalizer and an ingress,
// and its load balancer is ready: the cloud is completing nothing more
// (the pipeline's progress annotation is gone), so no sync of the
// pipeline's own is still to come.
func waitForIngress(t *testing.T, c *cluster.Cluster, name string) *corev1.Service {
	t.Helper()
	var svc *corev1.Service
	eventually(t, 90*time.Second, "service "+name+" with finalizer and ingress, its load balancer ready", func(ctx context.Context) (bool, error) {
		var err error
		svc, err = getService(ctx, c, name)
		if err != nil {
			return false, err
		}
		if progress := svc.Annotations[framework.ProgressAnnotation]; progress != "" {
			return false, fmt.Errorf("%s: %s", framework.ProgressAnnotation, progress)
		}
		return slices.Contains(svc.Finalizers, lbFinalizer) && len(svc.Status.LoadBalancer.Ingress) > 0, nil
	})
	return svc
}

// cloudLB waits until the cloud holds exactly one LB that satisfies ok.
func cloudLB(t *testing.T, c *cluster.Cluster, what string, ok func(frameworktest.LoadBalancer) bool) frameworktest.LoadBalancer {
	t.Helper()
	var lb frameworktest.LoadBalancer
	eventually(t, 90*time.Second, what, func(context.Context) (bool, error) {
		lbs := c.Sim.LoadBalancers()
		if len(lbs) != 1 {
			return false, fmt.Errorf("cloud holds %d load balancers: %+v", len(lbs), lbs)
		}
		lb = lbs[0]
		return ok(lb), nil
	})
	return lb
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func hasListener(lb frameworktest.LoadBalancer, port int32, nodePort int32) bool {
	return slices.ContainsFunc(lb.Listeners, func(l string) bool {
		return strings.Contains(l, fmt.Sprintf(":%d->", port)) && strings.HasSuffix(l, fmt.Sprintf(":%d", nodePort))
	})
}

func testLoadBalancer(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	if _, err := c.StartCCM("ccm"); err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 2)

	// Create: finalizer, LB with both nodes, ingress.
	createLBService(t, c, "web", 80)
	svc := waitForIngress(t, c, "web")
	nodePort := svc.Spec.Ports[0].NodePort
	cloudLB(t, c, "an LB for port 80 with both nodes", func(lb frameworktest.LoadBalancer) bool {
		return hasListener(lb, 80, nodePort) && slices.Equal(lb.Members, sortedValues(ids))
	})

	// Port change: the LB follows.
	svc.Spec.Ports[0].Port = 8080
	if _, err := c.Kube.CoreV1().Services(c.Namespace).Update(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cloudLB(t, c, "the LB listening on 8080", func(lb frameworktest.LoadBalancer) bool {
		return hasListener(lb, 8080, nodePort) && len(lb.Listeners) == 1
	})

	// A node joins, then leaves: only the members change.
	joined := addNodes(t, c, "late", 1)
	all := map[string]string{}
	for k, v := range ids {
		all[k] = v
	}
	for k, v := range joined {
		all[k] = v
	}
	cloudLB(t, c, "the new node among the members", func(lb frameworktest.LoadBalancer) bool {
		return slices.Equal(lb.Members, sortedValues(all))
	})
	c.Kubelet("late-0").Stop()
	if err := c.Kube.CoreV1().Nodes().Delete(t.Context(), "late-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cloudLB(t, c, "the departed node out of the members", func(lb frameworktest.LoadBalancer) bool {
		return slices.Equal(lb.Members, sortedValues(ids))
	})

	// Deleted: LB gone from the cloud, finalizer released, Service gone.
	if err := c.Kube.CoreV1().Services(c.Namespace).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "service deleted and nothing left in the cloud", func(ctx context.Context) (bool, error) {
		_, err := getService(ctx, c, "web")
		return apierrors.IsNotFound(err) && len(c.Sim.LoadBalancers()) == 0, nil
	})

	// Changed to ClusterIP: LB gone, finalizer and status cleared, Service kept.
	createLBService(t, c, "api", 443)
	svc = waitForIngress(t, c, "api")
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	for i := range svc.Spec.Ports {
		svc.Spec.Ports[i].NodePort = 0
	}
	if _, err := c.Kube.CoreV1().Services(c.Namespace).Update(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "LB removed after the change to ClusterIP", func(ctx context.Context) (bool, error) {
		svc, err := getService(ctx, c, "api")
		if err != nil {
			return false, err
		}
		return len(c.Sim.LoadBalancers()) == 0 && !slices.Contains(svc.Finalizers, lbFinalizer) && len(svc.Status.LoadBalancer.Ingress) == 0, nil
	})

	// A healthy cloud doing its job raises no Warning: Warnings are for
	// what the user must fix.
	noWarnings(t, c)
}

// noWarnings fails the test for every Warning Event on a Service or a
// Node, the objects the CCM acts on. kube-apiserver's own start-up
// Warnings (a ServiceCIDR its controller has not made yet on a busy
// machine) are not the CCM's.
func noWarnings(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	events, err := c.Kube.CoreV1().Events(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind != "Service" && e.InvolvedObject.Kind != "Node" {
			continue
		}
		if e.Source.Component == "ipallocator-repair-controller" || e.ReportingController == "ipallocator-repair-controller" {
			// kube-apiserver's own start-up repair of the kubernetes
			// Service's IP, raised when it races the allocator on a busy
			// machine: not the CCM's.
			continue
		}
		t.Errorf("Warning Event on %s %s/%s: %s (x%d): %s", e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Count, e.Message)
	}
}

// testServiceWhileNodesJoin: a Service created while its nodes are still
// being initialized gets exactly one LB. The service controller's node sync
// (UpdateLoadBalancer) then runs beside the Service's own sync
// (EnsureLoadBalancer); a pipeline that created from both made two LBs.
func testServiceWhileNodesJoin(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{Latency: 20 * time.Millisecond})
	if _, err := c.StartCCM("ccm"); err != nil {
		t.Fatal(err)
	}
	createLBService(t, c, "web", 80)
	ids := addNodes(t, c, "node", 3)
	waitForIngress(t, c, "web")
	cloudLB(t, c, "one LB with all three nodes", func(lb frameworktest.LoadBalancer) bool {
		return slices.Equal(lb.Members, sortedValues(ids))
	})
	consistently(t, 5*time.Second, "exactly one LB", func(context.Context) error {
		if n := len(c.Sim.LoadBalancers()); n != 1 {
			return fmt.Errorf("cloud holds %d load balancers, want 1", n)
		}
		return nil
	})
}
