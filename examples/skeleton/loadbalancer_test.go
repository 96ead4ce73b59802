package skeleton_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// lbFixture is the provider's load balancers on a simulated cloud
// (frameworktest.LBFixture: Services in a fake API server, syncs as the
// service controller makes them), with the simulator for what the cloud
// holds.
type lbFixture struct {
	*frameworktest.LBFixture
	sim *skeletonsim.Server
}

// newLBFixture starts a simulator and the provider on it, with opts; every
// Service has an HTTP and a DNS port.
func newLBFixture(t *testing.T, opts frameworktest.LBOptions) *lbFixture {
	t.Helper()
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	opts.Ports = []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
	}
	return &lbFixture{frameworktest.NewLBFixture(t, target(sim), opts), sim}
}

func TestLoadBalancerLifecycle(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{Nodes: []string{"node-1", "node-2"}})
	f.Nodes = append(f.Nodes, frameworktest.Node("node-new", "")) // not initialized yet
	svc := f.Service(t, "web", map[string]string{
		skeleton.AnnotationPrefix + "algorithm":      "least_connections",
		skeleton.AnnotationPrefix + "proxy-protocol": "true",
	})

	// The first sync creates the load balancer with its whole spec and
	// asks to be requeued while it provisions.
	if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) {
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
	if got := f.Fresh(t, svc).Annotations[skeleton.AnnotationLoadBalancerID]; got != want.ID {
		t.Errorf("ID annotation = %q, want %q", got, want.ID)
	}

	status := f.EnsureReady(t, svc)
	proxy := corev1.LoadBalancerIPModeProxy
	wantStatus := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "198.18.0.1", IPMode: &proxy}}}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("EnsureLoadBalancer with nothing changed made %d writes, want 0", n)
	}

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations[skeleton.AnnotationPrefix+"algorithm"] = "round_robin" })
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 1 {
		t.Errorf("changing the algorithm made %d writes, want 1", n)
	}
	f.Nodes = f.Nodes[1:]
	if err := f.Update(t, svc); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	want.Algorithm, want.Members, want.Status, want.IPv4 = "round_robin", []string{"i-000002"}, skeletonsim.StatusActive, "198.18.0.1"
	if diff := cmp.Diff([]skeletonsim.LoadBalancer{want}, f.sim.LoadBalancers()); diff != "" {
		t.Errorf("after updates, cloud (-want +got):\n%s", diff)
	}

	for i := range 2 {
		if err := f.Delete(t, svc); err != nil {
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
	f := newLBFixture(t, frameworktest.LBOptions{Nodes: []string{"node-1"}})
	svc := f.Service(t, "web", map[string]string{})
	f.EnsureReady(t, svc)
	f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, skeleton.AnnotationLoadBalancerID) })

	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("sync without the ID annotation made %d writes, want 0", n)
	}
	if got := len(f.sim.LoadBalancers()); got != 1 {
		t.Errorf("cloud holds %d load balancers, want 1", got)
	}
	if got := f.Fresh(t, svc).Annotations[skeleton.AnnotationLoadBalancerID]; got != "lb-000001" {
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
			f := newLBFixture(t, frameworktest.LBOptions{Nodes: []string{"node-1"}})
			annotations := map[string]string{}
			for k, v := range ann {
				annotations[skeleton.AnnotationPrefix+k] = v
			}
			svc := f.Service(t, "web", annotations)
			writes := f.WritesDuring(func() {
				if _, err := f.Ensure(t, svc); err == nil {
					t.Error("EnsureLoadBalancer succeeded, want an error")
				}
			})
			if writes != 0 {
				t.Errorf("%d cloud writes, want 0", writes)
			}
			if events := f.Drain(); len(events) == 0 || !strings.HasPrefix(events[0], "Warning InvalidAnnotation") {
				t.Errorf("events = %q, want a Warning InvalidAnnotation", events)
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
			f := newLBFixture(t, frameworktest.LBOptions{Nodes: []string{"node-1"}})
			svc := f.Service(t, "web", nil, mutate)
			before := f.sim.Stats()
			if _, err := f.Ensure(t, svc); err == nil {
				t.Error("EnsureLoadBalancer succeeded, want an error")
			}
			after := f.sim.Stats()
			for op, n := range after {
				if n != before[op] && !strings.HasPrefix(op, "GET ") {
					t.Errorf("API calls other than reads were made (-before +after):\n%s", cmp.Diff(before, after))
					break
				}
			}
			if events := f.Drain(); len(events) == 0 || !strings.HasPrefix(events[0], "Warning InvalidService") {
				t.Errorf("events = %q, want a Warning InvalidService", events)
			}
		})
	}
}

// TestLoadBalancerInErrorState: a load balancer the cloud puts in an error
// state fails the sync with the cloud's reason. The load-balancer list is
// read at every sync here (CacheTTL -1); with the framework's default TTL
// the change shows one TTL later.
func TestLoadBalancerInErrorState(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{Nodes: []string{"node-1"}, CacheTTL: -1})
	svc := f.Service(t, "web", map[string]string{})
	f.EnsureReady(t, svc)
	f.sim.SetLoadBalancerError("lb-000001", "no capacity in sk-1")

	_, err := f.Ensure(t, svc)
	if err == nil || !strings.Contains(err.Error(), "no capacity in sk-1") {
		t.Errorf("EnsureLoadBalancer error = %v, want the cloud's reason", err)
	}
}
