package frameworktest

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// What the conformance suite and LBFixture share: Services in a fake API
// server, the recorded Events and the cloud's writes.

// httpPort is a Service's port when nothing says otherwise.
var httpPort = corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}

// lbService is a Service of type LoadBalancer called name in the
// "default" namespace.
func lbService(name string, uid types.UID, annotations map[string]string, ports []corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid, Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: append([]corev1.ServicePort(nil), ports...)},
	}
}

// withAnnotations is base with extra on top, a new map.
func withAnnotations(base, extra map[string]string) map[string]string {
	ann := map[string]string{}
	maps.Copy(ann, base)
	maps.Copy(ann, extra)
	return ann
}

// create stores svc in kube and returns what kube holds.
func create(t *testing.T, ctx context.Context, kube kubernetes.Interface, svc *corev1.Service) *corev1.Service {
	t.Helper()
	created, err := kube.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// stored is svc as kube holds it.
func stored(t *testing.T, ctx context.Context, kube kubernetes.Interface, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := kube.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// drain returns the events rec holds.
func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// writesDuring returns how many writes c served while fn ran.
func writesDuring(c Cloud, fn func()) int {
	before := c.Writes()
	fn()
	return c.Writes() - before
}

// onlyLoadBalancer returns c's one load balancer; it fails t unless c
// holds exactly one.
func onlyLoadBalancer(t *testing.T, c Cloud) LoadBalancer {
	t.Helper()
	lbs := c.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("the cloud holds %d load balancers, want 1: %+v", len(lbs), lbs)
	}
	return lbs[0]
}
