package rancher

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

func testService(mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("1b4e28ba-2fa1-11d2-883f-0016d3cca427")},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func testNode(name string, addrs ...corev1.NodeAddress) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Addresses: addrs}}
}

func withProviderID(n *corev1.Node, id string) *corev1.Node {
	n.Spec.ProviderID = id
	return n
}

// testRequest decodes annotations as the pipeline does.
func testRequest(t *testing.T, svc *corev1.Service, nodes ...*corev1.Node) *lbRequest {
	t.Helper()
	cfg := &LoadBalancerConfig{}
	if _, err := annotations.Decode(svc.Annotations, AnnotationPrefix, cfg); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return &lbRequest{ClusterName: "kubernetes", Service: svc, Nodes: nodes, Config: cfg, Name: loadBalancerName("", svc, cfg)}
}

func TestLoadBalancerName(t *testing.T) {
	// As the existing CCM: lb- and cloudprovider's default name.
	if got, want := loadBalancerName("c", testService(), nil), "lb-a1b4e28ba2fa111d2883f0016d3cca42"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	for name, want := range map[string]bool{
		"lb-x-nodes": true, "lb-x-nodes-0a1b2c3d": true, "lb-x-nodesy": false, "lb-xy-nodes": false, "node-1": false,
	} {
		if got := isBackendOf(name, "lb-x"); got != want {
			t.Errorf("isBackendOf(%q, lb-x) = %v, want %v", name, got, want)
		}
	}
}

func TestDesired(t *testing.T) {
	internal := func(ip string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
	}
	external := corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.9"}
	nodes := []*corev1.Node{
		testNode("b", external, internal("10.0.0.2")),
		testNode("a", internal("10.0.0.1")),
		testNode("a-again", internal("10.0.0.1")),
		testNode("uninitialized"),
		withProviderID(testNode("agent-ip-only"), "rancher://u-1"),
	}
	svc := testService(func(s *corev1.Service) {
		s.Annotations = map[string]string{
			annotationKey("port-protocols"):    "http=http,443=https",
			annotationKey("certificate-ids"):   "1c3,1c4",
			annotationKey("stickiness-cookie"): "SRV",
			annotationKey("image"):             "rancher/lb-service-haproxy:v0.9.14",
		}
	})
	got, err := desired(context.Background(), testRequest(t, svc, nodes...), "ignored/by-annotation:1", map[string]string{"u-1": "10.0.0.3"})
	if err != nil {
		t.Fatal(err)
	}
	want := &desiredLB{
		ports: []string{"443:443/tcp", "53:53/udp", "80:80/tcp"},
		image: "docker:rancher/lb-service-haproxy:v0.9.14",
		rules: []rancher.PortRule{
			{SourcePort: 53, TargetPort: 30053, Protocol: "udp"},
			{SourcePort: 80, TargetPort: 30080, Protocol: "http"},
			{SourcePort: 443, TargetPort: 30443, Protocol: "https"},
		},
		certs:      []string{"1c3", "1c4"},
		stickiness: &rancher.LoadBalancerCookieStickinessPolicy{Name: "cookie", Cookie: "SRV", Mode: "insert", Indirect: true, Nocache: true},
		backend:    desiredBackend{name: "lb-nodes-kubernetes", shared: true, ips: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(desiredLB{}, desiredBackend{})); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
	cfg := lbConfig(got, "1s9")
	if cfg.DefaultCertificateId != "1c3" || !cmp.Equal(cfg.CertificateIds, []string{"1c4"}) {
		t.Errorf("certificates = %q %q, want default 1c3 and 1c4", cfg.DefaultCertificateId, cfg.CertificateIds)
	}
	for _, r := range cfg.PortRules {
		if r.ServiceId != "1s9" {
			t.Errorf("port rule %+v: serviceId want 1s9", r)
		}
	}
	if lc := launchConfig(nil, &desiredLB{ports: []string{"80:80/tcp"}}, "docker:rancher/lb-service-haproxy:v0.7.9"); lc.ImageUuid != "docker:rancher/lb-service-haproxy:v0.7.9" {
		t.Errorf("a new load balancer without image annotation: imageUuid %q, want the environment's", lc.ImageUuid)
	}
	kept := launchConfig(&rancher.LaunchConfig{ImageUuid: "docker:old", Ports: []string{"80:80/tcp"}, Labels: map[string]any{"k": "v"}}, &desiredLB{ports: []string{"81:81/tcp"}}, "")
	if kept.ImageUuid != "docker:old" || kept.Labels["k"] != "v" || !cmp.Equal(kept.Ports, []string{"81:81/tcp"}) {
		t.Errorf("an upgrade keeps the image and the rest of the launchConfig, changes the ports: %+v", kept)
	}
}

func TestDesiredHealthCheck(t *testing.T) {
	local := testService(func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	})
	got, err := desired(context.Background(), testRequest(t, local), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &rancher.InstanceHealthCheck{Port: 32000, RequestLine: `GET "/healthz" "HTTP/1.0"`, Strategy: "none", Interval: 2000, ResponseTimeout: 2000, HealthyThreshold: 2, UnhealthyThreshold: 3}
	if diff := cmp.Diff(want, got.backend.healthCheck); diff != "" {
		t.Errorf("health check (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.backend.name, "lb-a1b4e28ba2fa111d2883f0016d3cca42-nodes-") {
		t.Errorf("backend name = %q, want the load balancer's with -nodes-<hash>", got.backend.name)
	}
	local.Annotations = map[string]string{annotationKey("healthcheck-interval"): "5000"}
	other, _ := desired(context.Background(), testRequest(t, local), "", nil)
	if other.backend.name == got.backend.name {
		t.Errorf("a changed health check keeps the name %q: Cattle cannot change it in place", got.backend.name)
	}
	cluster, _ := desired(context.Background(), testRequest(t, testService()), "", nil)
	if cluster.backend.healthCheck != nil {
		t.Errorf("externalTrafficPolicy Cluster: health check %+v, want none", cluster.backend.healthCheck)
	}
}

func TestValidateService(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*corev1.Service)
		want   []string
	}{
		"valid": {mutate: func(*corev1.Service) {}},
		"source ranges": {
			mutate: func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} },
			want:   []string{"spec.loadBalancerSourceRanges"},
		},
		"affinity and IP": {
			mutate: func(s *corev1.Service) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.LoadBalancerIP = "192.0.2.1"
			},
			want: []string{"spec.sessionAffinity", "spec.loadBalancerIP"},
		},
		"SCTP and no node port": {
			mutate: func(s *corev1.Service) {
				s.Spec.Ports[0].Protocol = corev1.ProtocolSCTP
				s.Spec.Ports[1].NodePort = 0
			},
			want: []string{"spec.ports[0].protocol", "spec.ports[1].nodePort"},
		},
		"TLS without certificate, stickiness without HTTP, unknown port": {
			mutate: func(s *corev1.Service) {
				s.Annotations = map[string]string{annotationKey("port-protocols"): "443=tls,8080=http", annotationKey("stickiness-cookie"): "S"}
			},
			want: []string{"certificate-ids", "stickiness-cookie", "no port 8080"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := validateService(testRequest(t, testService(tc.mutate)))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("validateService: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validateService: no error, want one naming %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestLoadBalancerConfigValidate(t *testing.T) {
	cfg := &LoadBalancerConfig{}
	_, err := annotations.Decode(map[string]string{
		annotationKey("port-protocols"):    "80=quic",
		annotationKey("certificate-ids"):   "cert",
		annotationKey("image"):             "Not An Image",
		annotationKey("stickiness-cookie"): "a b",
	}, AnnotationPrefix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Global, cfg.Scale = true, 2
	err = cfg.Validate()
	for _, w := range []string{"port-protocols", "certificate-ids", "-image", "stickiness-cookie", "-scale", "-global"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate: %v, want an error naming %s", err, w)
		}
	}
	if _, err := annotations.Fields(AnnotationPrefix, &LoadBalancerConfig{}); err != nil {
		t.Errorf("annotation struct: %v", err)
	}
}

func TestLoadBalancerSettingsValidate(t *testing.T) {
	s := &LoadBalancerSettings{}
	if err := s.validate(); err != nil || s.stackName() != "kubernetes-loadbalancers" || s.stackExternalID() != "kubernetes-loadbalancers://" {
		t.Errorf("defaults: %v, stack %q %q; want the existing CCM's kubernetes-loadbalancers and kubernetes-loadbalancers://", err, s.stackName(), s.stackExternalID())
	}
	bad := &LoadBalancerSettings{Stack: "no spaces", Image: "UPPER"}
	if err := bad.validate(); err == nil || !strings.Contains(err.Error(), "RANCHER_LB_STACK") || !strings.Contains(err.Error(), "RANCHER_LB_IMAGE") {
		t.Errorf("validate: %v, want errors naming RANCHER_LB_STACK and RANCHER_LB_IMAGE", err)
	}
}

// TestSharedBackendName: the shared external service is named for the
// cluster, as Cattle allows a service name; a cluster name Cattle would
// refuse, or too long, is made valid and keeps a hash of itself, so that
// two clusters sharing a stack do not share it.
func TestSharedBackendName(t *testing.T) {
	long := strings.Repeat("c", 80)
	for cluster, want := range map[string]string{
		"kubernetes": "lb-nodes-kubernetes",
		"prod-eu-1":  "lb-nodes-prod-eu-1",
	} {
		if got := sharedBackendName(cluster); got != want {
			t.Errorf("sharedBackendName(%q) = %q, want %q", cluster, got, want)
		}
	}
	seen := map[string]string{}
	for _, cluster := range []string{"", "my_cluster", "my.cluster", "-x-", long, long + "d"} {
		got := sharedBackendName(cluster)
		if !strings.HasPrefix(got, sharedPrefix) || len(got) > 63 || !cattleNamePattern.MatchString(got) {
			t.Errorf("sharedBackendName(%q) = %q: not a valid Cattle name beginning %s", cluster, got, sharedPrefix)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("clusters %q and %q both get %q", other, cluster, got)
		}
		seen[got] = cluster
	}
}
