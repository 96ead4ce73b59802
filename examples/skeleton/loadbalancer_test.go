package skeleton_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
)

// createService stores a LoadBalancer Service with an HTTP and a DNS port in
// the fake API server.
func (f *fixture) createService(t *testing.T, name string, annotations map[string]string) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
			},
		},
	}
	created, err := f.kube.CoreV1().Services("default").Create(f.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// fresh returns the Service as the API server holds it now, as the service
// controller passes it on each sync.
func (f *fixture) fresh(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := f.kube.CoreV1().Services(svc.Namespace).Get(f.ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (f *fixture) setAnnotation(t *testing.T, svc *corev1.Service, key, value string) {
	t.Helper()
	cur := f.fresh(t, svc)
	if value == "" {
		delete(cur.Annotations, key)
	} else {
		cur.Annotations[key] = value
	}
	if _, err := f.kube.CoreV1().Services(cur.Namespace).Update(f.ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ensureReady syncs the Service like the service controller does until the
// load balancer is ready: each requeue is one more sync, and the simulator
// activates a load balancer on its second read.
func (f *fixture) ensureReady(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) *corev1.LoadBalancerStatus {
	t.Helper()
	lb, _ := f.cloud.LoadBalancer()
	for range 5 {
		status, err := lb.EnsureLoadBalancer(f.ctx, clusterName, f.fresh(t, svc), nodes)
		var retry *api.RetryError
		if !errors.As(err, &retry) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancer: %v", err)
			}
			return status
		}
	}
	t.Fatal("load balancer not ready after 5 syncs")
	return nil
}

// writes returns the cloud writes f makes.
func (f *fixture) writes(fn func()) int {
	before := f.sim.Writes()
	fn()
	return f.sim.Writes() - before
}

func (f *fixture) addNodes(names ...string) []*corev1.Node {
	var nodes []*corev1.Node
	for _, name := range names {
		inst := f.sim.AddInstance(skeletonsim.Instance{Name: name})
		nodes = append(nodes, node(name, "skeleton://"+inst.ID))
	}
	return nodes
}

func TestLoadBalancerLifecycle(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	nodes := append(f.addNodes("node-1", "node-2"), node("node-new", "")) // not initialized yet
	svc := f.createService(t, "web", map[string]string{
		skeleton.AnnotationPrefix + "algorithm":      "least_connections",
		skeleton.AnnotationPrefix + "proxy-protocol": "true",
	})
	lb, _ := f.cloud.LoadBalancer()

	// The first sync creates the load balancer with its whole spec and
	// asks to be requeued while it provisions.
	_, err := lb.EnsureLoadBalancer(f.ctx, clusterName, svc, nodes)
	if retry := new(api.RetryError); !errors.As(err, &retry) {
		t.Fatalf("first EnsureLoadBalancer: err = %v, want a RetryError while provisioning", err)
	}
	want := skeletonsim.LoadBalancer{
		ID: "lb-000001",
		LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
			Name:      "test-cluster-default-web",
			Algorithm: "least_connections",
			Listeners: []skeletonsim.Listener{
				{Protocol: "TCP", Port: 80, TargetPort: 30080},
				{Protocol: "UDP", Port: 53, TargetPort: 30053},
			},
			HealthCheck:   skeletonsim.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
			ProxyProtocol: true,
			Members:       []string{"i-000001", "i-000002"},
			Tags:          []string{"ccmkit:test-cluster:uid-web"},
		},
		Status: skeletonsim.StatusProvisioning,
	}
	if diff := cmp.Diff([]skeletonsim.LoadBalancer{want}, f.sim.LoadBalancers()); diff != "" {
		t.Errorf("after create, cloud (-want +got):\n%s", diff)
	}
	if got := f.fresh(t, svc).Annotations[skeleton.AnnotationLoadBalancerID]; got != want.ID {
		t.Errorf("ID annotation = %q, want %q", got, want.ID)
	}

	status := f.ensureReady(t, svc, nodes)
	proxy := corev1.LoadBalancerIPModeProxy
	wantStatus := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "198.18.0.1", IPMode: &proxy}}}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	if n := f.writes(func() { f.ensureReady(t, svc, nodes) }); n != 0 {
		t.Errorf("EnsureLoadBalancer with nothing changed made %d writes, want 0", n)
	}

	f.setAnnotation(t, svc, skeleton.AnnotationPrefix+"algorithm", "round_robin")
	if n := f.writes(func() { f.ensureReady(t, svc, nodes) }); n != 1 {
		t.Errorf("changing the algorithm made %d writes, want 1", n)
	}
	if err := lb.UpdateLoadBalancer(f.ctx, clusterName, f.fresh(t, svc), nodes[1:]); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	want.Algorithm, want.Members, want.Status, want.IPv4 = "round_robin", []string{"i-000002"}, skeletonsim.StatusActive, "198.18.0.1"
	if diff := cmp.Diff([]skeletonsim.LoadBalancer{want}, f.sim.LoadBalancers()); diff != "" {
		t.Errorf("after updates, cloud (-want +got):\n%s", diff)
	}

	for i := range 2 {
		if err := lb.EnsureLoadBalancerDeleted(f.ctx, clusterName, f.fresh(t, svc)); err != nil {
			t.Fatalf("EnsureLoadBalancerDeleted #%d: %v", i+1, err)
		}
	}
	if got := f.sim.LoadBalancers(); len(got) != 0 {
		t.Errorf("after delete the cloud holds %+v", got)
	}
}

// TestLoadBalancerFoundByOwnerTag covers a crash between creating the load
// balancer and recording its ID: the next sync must find it, not create a
// second one.
func TestLoadBalancerFoundByOwnerTag(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	nodes := f.addNodes("node-1")
	svc := f.createService(t, "web", map[string]string{})
	f.ensureReady(t, svc, nodes)
	f.setAnnotation(t, svc, skeleton.AnnotationLoadBalancerID, "")

	if n := f.writes(func() { f.ensureReady(t, svc, nodes) }); n != 0 {
		t.Errorf("sync without the ID annotation made %d writes, want 0", n)
	}
	if got := len(f.sim.LoadBalancers()); got != 1 {
		t.Errorf("cloud holds %d load balancers, want 1", got)
	}
	if got := f.fresh(t, svc).Annotations[skeleton.AnnotationLoadBalancerID]; got != "lb-000001" {
		t.Errorf("ID annotation = %q, want it written again", got)
	}
}

func TestLoadBalancerInvalidAnnotations(t *testing.T) {
	tests := map[string]map[string]string{
		"unknown algorithm":      {"algorithm": "random"},
		"interval out of range":  {"health-check-interval": "301"},
		"path without http":      {"health-check-path": "/ready"},
		"path not starting in /": {"health-check-protocol": "http", "health-check-path": "ready"},
	}
	for name, ann := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, skeletonsim.Options{})
			annotations := map[string]string{}
			for k, v := range ann {
				annotations[skeleton.AnnotationPrefix+k] = v
			}
			svc := f.createService(t, "web", annotations)
			lb, _ := f.cloud.LoadBalancer()
			writes := f.writes(func() {
				if _, err := lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.addNodes("node-1")); err == nil {
					t.Error("EnsureLoadBalancer succeeded, want an error")
				}
			})
			if writes != 0 {
				t.Errorf("%d cloud writes, want 0", writes)
			}
			if event := <-f.events.Events; !strings.HasPrefix(event, "Warning InvalidAnnotation") {
				t.Errorf("event = %q, want a Warning InvalidAnnotation", event)
			}
		})
	}
}

// A Service the Skeleton API cannot serve is refused before any write: the
// only calls are the reads that look for a load balancer the Service owns
// without its ID recorded (the framework records it).
func TestLoadBalancerUnservableService(t *testing.T) {
	tests := map[string]func(*corev1.Service){
		"source ranges": func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"} },
		"SCTP":          func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolSCTP },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, skeletonsim.Options{})
			svc := f.createService(t, "web", nil)
			mutate(svc)
			lb, _ := f.cloud.LoadBalancer()
			before := f.sim.Stats()
			if _, err := lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.addNodes("node-1")); err == nil {
				t.Error("EnsureLoadBalancer succeeded, want an error")
			}
			after := f.sim.Stats()
			for op, n := range after {
				if n != before[op] && !strings.HasPrefix(op, "GET ") {
					t.Errorf("API calls other than reads were made (-before +after):\n%s", cmp.Diff(before, after))
					break
				}
			}
			if event := <-f.events.Events; !strings.HasPrefix(event, "Warning InvalidService") {
				t.Errorf("event = %q, want a Warning InvalidService", event)
			}
		})
	}
}

func TestLoadBalancerInErrorState(t *testing.T) {
	// A change made outside the CCM shows at the next list, at most one
	// load-balancer cache TTL later.
	const ttl = 50 * time.Millisecond
	f := newFixture(t, skeletonsim.Options{}, func(env *framework.Env) { env.LoadBalancerCacheTTL = ttl })
	nodes := f.addNodes("node-1")
	svc := f.createService(t, "web", map[string]string{})
	f.ensureReady(t, svc, nodes)
	f.sim.SetLoadBalancerError("lb-000001", "no capacity in sk-1")
	time.Sleep(ttl)

	lb, _ := f.cloud.LoadBalancer()
	_, err := lb.EnsureLoadBalancer(f.ctx, clusterName, f.fresh(t, svc), nodes)
	if err == nil || !strings.Contains(err.Error(), "no capacity in sk-1") {
		t.Errorf("EnsureLoadBalancer error = %v, want the cloud's reason", err)
	}
}
