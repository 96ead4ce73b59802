package skeleton

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/annotations"
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

func TestSpecChanges(t *testing.T) {
	have := lbSpec{
		Name: "n", Algorithm: "round_robin",
		Listeners:   []listener{{"TCP", 80, 30080}, {"UDP", 53, 30053}},
		HealthCheck: healthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
		Members:     []string{"i-1", "i-2"},
		Tags:        []string{"t"},
	}
	tests := []struct {
		name   string
		change func(*lbSpec)
		want   []string
	}{
		{"identical", func(*lbSpec) {}, nil},
		{"order does not count", func(s *lbSpec) {
			s.Listeners = []listener{{"UDP", 53, 30053}, {"TCP", 80, 30080}}
			s.Members = []string{"i-2", "i-1"}
		}, nil},
		{"node port moved", func(s *lbSpec) { s.Listeners = []listener{{"TCP", 80, 30081}, {"UDP", 53, 30053}} }, []string{"listeners"}},
		{"member joined", func(s *lbSpec) { s.Members = []string{"i-1", "i-2", "i-3"} }, []string{"members"}},
		{"everything else", func(s *lbSpec) {
			s.Name, s.Algorithm, s.ProxyProtocol = "m", "least_connections", true
			s.HealthCheck.IntervalSeconds = 20
			s.Tags = []string{"t", "u"}
		}, []string{"name", "algorithm", "health check", "proxy protocol", "tags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := have
			want.Listeners = append([]listener(nil), have.Listeners...)
			tt.change(&want)
			if diff := cmp.Diff(tt.want, specChanges(&have, &want)); diff != "" {
				t.Errorf("specChanges (-want +got):\n%s", diff)
			}
		})
	}
	// A cloud that lists a member twice gets repaired by a PUT.
	dup := have
	dup.Members = []string{"i-1", "i-1", "i-2"}
	if got := specChanges(&dup, &have); !cmp.Equal(got, []string{"members"}) {
		t.Errorf("duplicate member in the cloud: changes = %v, want [members]", got)
	}
}

func TestLoadBalancerConfig(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        LoadBalancerConfig
		wantErrs    []string
		wantUnknown []string
	}{
		{
			name: "defaults",
			want: LoadBalancerConfig{Algorithm: "round_robin", HealthCheckInterval: 10 * time.Second},
		},
		{
			name: "every annotation",
			annotations: map[string]string{
				"skeleton.ccmkit.io/name":                  "web",
				"skeleton.ccmkit.io/algorithm":             "LEAST_CONNECTIONS",
				"skeleton.ccmkit.io/health-check-protocol": "http",
				"skeleton.ccmkit.io/health-check-path":     "/ready",
				"skeleton.ccmkit.io/health-check-interval": "15",
				"skeleton.ccmkit.io/proxy-protocol":        "yes",
				"skeleton.ccmkit.io/load-balancer-id":      "lb-000001",
				"skeleton.ccmkit.io/algorthm":              "typo",
			},
			want: LoadBalancerConfig{
				Name: "web", Algorithm: "least_connections", HealthCheckProtocol: "http", HealthCheckPath: "/ready",
				HealthCheckInterval: 15 * time.Second, ProxyProtocol: true, LoadBalancerID: "lb-000001",
			},
			wantUnknown: []string{"skeleton.ccmkit.io/algorthm"},
		},
		{
			name: "every error at once",
			annotations: map[string]string{
				"skeleton.ccmkit.io/algorithm":             "random",
				"skeleton.ccmkit.io/health-check-interval": "abc",
				"skeleton.ccmkit.io/proxy-protocol":        "maybe",
			},
			wantErrs: []string{"algorithm", "health-check-interval", "proxy-protocol"},
		},
		{
			name:        "path needs http",
			annotations: map[string]string{"skeleton.ccmkit.io/health-check-path": "/ready"},
			wantErrs:    []string{`needs "skeleton.ccmkit.io/health-check-protocol" set to "http"`},
		},
		{
			name:        "interval in whole seconds",
			annotations: map[string]string{"skeleton.ccmkit.io/health-check-interval": "1500ms"},
			wantErrs:    []string{"not a whole number of seconds"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg LoadBalancerConfig
			res, err := annotations.Decode(tt.annotations, AnnotationPrefix, &cfg)
			if err == nil {
				err = cfg.Validate()
			}
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, cfg); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
			}
			for _, want := range tt.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to mention %q", err, want)
				}
			}
			if diff := cmp.Diff(tt.wantUnknown, res.Unknown); diff != "" {
				t.Errorf("unknown annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadBalancerConfigTags catches a struct tag the annotations package
// cannot honour before a user does.
func TestLoadBalancerConfigTags(t *testing.T) {
	if _, err := annotations.Fields(AnnotationPrefix, &LoadBalancerConfig{}); err != nil {
		t.Fatal(err)
	}
}
