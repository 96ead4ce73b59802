package skeleton

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/providerid"
)

func testService(mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
				{Name: "http", Port: 80, NodePort: 30080}, // protocol defaults to TCP
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func testNodes(providerIDs ...string) []*corev1.Node {
	var out []*corev1.Node
	for i, id := range providerIDs {
		out = append(out, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + string(rune('a'+i))},
			Spec:       corev1.NodeSpec{ProviderID: id},
		})
	}
	return out
}

func defaultConfig() *LoadBalancerConfig {
	return &LoadBalancerConfig{Algorithm: "round_robin", HealthCheckInterval: 10 * time.Second}
}

func TestDesiredSpec(t *testing.T) {
	base := lbSpec{
		Name:      "lb-name",
		Algorithm: "round_robin",
		Listeners: []listener{
			{Protocol: "TCP", Port: 80, TargetPort: 30080},
			{Protocol: "TCP", Port: 443, TargetPort: 30443},
		},
		HealthCheck: healthCheck{Protocol: "tcp", Port: 30443, IntervalSeconds: 10},
		Members:     []string{"i-1", "i-2"},
		Tags:        []string{"ccmkit:c1:uid-1"},
	}
	with := func(f func(*lbSpec)) *lbSpec {
		s := base
		f(&s)
		return &s
	}
	tests := []struct {
		name        string
		svc         *corev1.Service
		cfg         func(*LoadBalancerConfig)
		nodes       []*corev1.Node
		currentTags []string
		want        *lbSpec
		wantErr     string
	}{
		{
			name:  "defaults; members sorted, deduplicated, uninitialized and foreign nodes left out",
			svc:   testService(),
			nodes: testNodes("skeleton://i-2", "", "skeleton://i-1", "other://x", "skeleton://i-2"),
			want:  &base,
		},
		{
			name: "externalTrafficPolicy Local probes kube-proxy's health check port",
			svc: testService(func(s *corev1.Service) {
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}),
			cfg:   func(c *LoadBalancerConfig) { c.HealthCheckProtocol = "tcp" }, // kube-proxy's port wins
			nodes: testNodes("skeleton://i-1", "skeleton://i-2"),
			want: with(func(s *lbSpec) {
				s.HealthCheck = healthCheck{Protocol: "http", Port: 32000, Path: "/healthz", IntervalSeconds: 10}
			}),
		},
		{
			name: "annotations",
			svc:  testService(),
			cfg: func(c *LoadBalancerConfig) {
				c.Algorithm, c.ProxyProtocol = "least_connections", true
				c.HealthCheckProtocol, c.HealthCheckInterval = "http", 30*time.Second
			},
			nodes: testNodes("skeleton://i-1", "skeleton://i-2"),
			want: with(func(s *lbSpec) {
				s.Algorithm, s.ProxyProtocol = "least_connections", true
				s.HealthCheck = healthCheck{Protocol: "http", Port: 30443, Path: "/", IntervalSeconds: 30}
			}),
		},
		{
			name:        "other tags are kept, the owner tag added once",
			svc:         testService(),
			nodes:       testNodes("skeleton://i-1", "skeleton://i-2"),
			currentTags: []string{"team:web"},
			want:        with(func(s *lbSpec) { s.Tags = []string{"team:web", "ccmkit:c1:uid-1"} }),
		},
		{
			name:    "SCTP",
			svc:     testService(func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolSCTP }),
			wantErr: "protocol SCTP is not supported",
		},
		{
			name:    "no node ports",
			svc:     testService(func(s *corev1.Service) { s.Spec.Ports[1].NodePort = 0 }),
			wantErr: "port 80 has no node port",
		},
		{
			name:    "source ranges cannot be enforced",
			svc:     testService(func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"} }),
			wantErr: "cannot restrict source ranges",
		},
	}
	codec := providerid.Codec{Scheme: ProviderName}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cfg := defaultConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			req := &lbRequest{ClusterName: "c1", Service: tt.svc, Nodes: tt.nodes, Name: "lb-name", Config: cfg}
			var got *lbSpec
			err := validateService(tt.svc)
			if err == nil {
				got, err = desiredSpec(ctx, req, codec, tt.currentTags)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("desiredSpec (-want +got):\n%s", diff)
			}
		})
	}
}
