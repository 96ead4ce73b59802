package brightbox

import (
	"context"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/annotations"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// decoded returns the config the pipeline would decode from ann, failing
// the test on a bad annotation.
func decoded(t *testing.T, ann map[string]string) *LoadBalancerConfig {
	t.Helper()
	cfg := &LoadBalancerConfig{}
	res, err := annotations.Decode(ann, AnnotationPrefix, cfg)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil || len(res.Unknown) > 0 {
		t.Fatalf("decoding %v: %v (unknown %v)", ann, err, res.Unknown)
	}
	return cfg
}

func testService(mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func TestLoadBalancerName(t *testing.T) {
	if got := loadBalancerName("c1", testService(), nil); got != "web.shop.c1" {
		t.Errorf("loadBalancerName = %q, want the existing CCM's web.shop.c1", got)
	}
}

func TestAnnotationFields(t *testing.T) {
	fields, err := annotations.Fields(AnnotationPrefix, &LoadBalancerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Every annotation of the existing CCM, by its full key.
	for _, key := range []string{"policy", "listener-protocol", "listener-idle-timeout", "listener-proxy-protocol", "ssl-ports", "ssl-domains",
		"cloudip-allocations", "healthcheck-healthy-threshold", "healthcheck-unhealthy-threshold", "healthcheck-protocol",
		"healthcheck-request", "healthcheck-timeout", "id"} {
		if !hasField(fields, AnnotationPrefix+key) {
			t.Errorf("no field claims %s", AnnotationPrefix+key)
		}
	}
	if !hasField(fields, "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval") {
		t.Error("the existing CCM's health-check interval key (under aws-load-balancer-) is not read")
	}
}

func hasField(fields []annotations.Field, key string) bool {
	for _, f := range fields {
		if f.Key == key {
			return true
		}
	}
	return false
}

func TestDesiredOptions(t *testing.T) {
	codec := providerid.Codec{Scheme: ProviderName}
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.NodeSpec{ProviderID: "brightbox://srv-bbbbb"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.NodeSpec{ProviderID: "brightbox://srv-aaaaa"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
	}
	cip := &brightbox.CloudIP{ID: "cip-12345", Fqdn: "cip-12345.gb1.brightbox.com", ReverseDNS: "cip-109-107-1-1.gb1.brightbox.com"}
	local := func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	}
	for name, tc := range map[string]struct {
		ann     map[string]string
		svc     *corev1.Service
		https   bool
		domains []string
		ls      []brightbox.LoadBalancerListener
		hc      brightbox.LoadBalancerHealthcheck
		policy  balancingpolicy.Enum
	}{
		"defaults: http, 443 https for the cloud IP's names": {
			svc: testService(), https: true, domains: []string{"cip-109-107-1-1.gb1.brightbox.com", "cip-12345.gb1.brightbox.com"},
			ls: []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Http, In: 80, Out: 30080}, {Protocol: listenerprotocol.Https, In: 443, Out: 30443}},
			hc: brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 30443, Request: "/healthz"}, policy: balancingpolicy.LeastConnections,
		},
		"tcp, proxy protocol, timings": {
			ann: map[string]string{AnnotationPrefix + "listener-protocol": "tcp", AnnotationPrefix + "listener-proxy-protocol": "v2",
				AnnotationPrefix + "listener-idle-timeout": "120000", AnnotationPrefix + "policy": "round-robin",
				AnnotationPrefix + "healthcheck-healthy-threshold": "4", AnnotationPrefix + "healthcheck-unhealthy-threshold": "2",
				AnnotationPrefix + "healthcheck-timeout": "3000", "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "7000"},
			svc: testService(), domains: []string{},
			ls: []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 80, Out: 30080, Timeout: 120000, ProxyProtocol: proxyprotocol.V2},
				{Protocol: listenerprotocol.Tcp, In: 443, Out: 30443, Timeout: 120000, ProxyProtocol: proxyprotocol.V2}},
			hc:     brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Tcp, Port: 30443, Request: "/", Interval: 7000, Timeout: 3000, ThresholdUp: 4, ThresholdDown: 2},
			policy: balancingpolicy.RoundRobin,
		},
		"externalTrafficPolicy Local: http to the healthCheckNodePort": {
			ann: map[string]string{AnnotationPrefix + "listener-protocol": "tcp"},
			svc: testService(local), domains: []string{},
			ls: []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Tcp, In: 80, Out: 30080}, {Protocol: listenerprotocol.Tcp, In: 443, Out: 30443}},
			hc: brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 32000, Request: "/healthz"}, policy: balancingpolicy.LeastConnections,
		},
		"http+ws, ssl-ports by name, ssl-domains, health check overridden": {
			ann: map[string]string{AnnotationPrefix + "listener-protocol": "http+ws", AnnotationPrefix + "ssl-ports": "alt",
				AnnotationPrefix + "ssl-domains": "WWW.example.com,api.example.com", AnnotationPrefix + "healthcheck-request": "/ready"},
			svc: testService(func(s *corev1.Service) {
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "alt", Protocol: corev1.ProtocolTCP, Port: 8443, NodePort: 30844})
			}),
			https: true, domains: []string{"api.example.com", "cip-109-107-1-1.gb1.brightbox.com", "cip-12345.gb1.brightbox.com", "www.example.com"},
			ls: []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Http, In: 80, Out: 30080}, {Protocol: listenerprotocol.Https, In: 443, Out: 30443},
				{Protocol: listenerprotocol.Https, In: 8443, Out: 30844}},
			hc: brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 30443, Request: "/ready"}, policy: balancingpolicy.LeastConnections,
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := decoded(t, tc.ann)
			req := &lbRequest{Service: tc.svc, Nodes: nodes, Name: "web.shop.c1", Config: cfg}
			got, err := desiredOptions(context.Background(), req, cip, codec)
			if err != nil {
				t.Fatal(err)
			}
			want := &brightbox.LoadBalancerOptions{
				Name: &req.Name, Nodes: []brightbox.LoadBalancerNode{{Node: "srv-aaaaa"}, {Node: "srv-bbbbb"}}, Policy: tc.policy,
				Listeners: tc.ls, Healthcheck: &tc.hc, Domains: &tc.domains, HTTPSRedirect: &tc.https,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("desiredOptions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredRule(t *testing.T) {
	got := desiredRule(testService(func(s *corev1.Service) { s.Spec.HealthCheckNodePort = 32000 }), "web.shop.c1")
	want := firewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30443,30080,32000", Description: "web.shop.c1"}
	if got != want {
		t.Errorf("desiredRule = %+v, want the existing CCM's %+v", got, want)
	}
}

func TestInvalidConfigNamesTheKey(t *testing.T) {
	for key, ann := range map[string]map[string]string{
		"listener-protocol":   {AnnotationPrefix + "listener-protocol": "udp"},
		"policy":              {AnnotationPrefix + "policy": "random"},
		"ssl-ports":           {AnnotationPrefix + "ssl-ports": "8443"},
		"ssl-domains":         {AnnotationPrefix + "listener-protocol": "tcp", AnnotationPrefix + "ssl-domains": "a.example.com"},
		"cloudip-allocations": {AnnotationPrefix + "cloudip-allocations": "10.0.0.1"},
		"healthcheck-request": {AnnotationPrefix + "healthcheck-request": "healthz"},
		"healthcheck-timeout": {AnnotationPrefix + "healthcheck-timeout": "-1"},
	} {
		cfg := &LoadBalancerConfig{}
		_, err := annotations.Decode(ann, AnnotationPrefix, cfg)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), AnnotationPrefix+key) {
			t.Errorf("%v: error %v, want one naming %s", ann, err, AnnotationPrefix+key)
		}
	}
}

func TestValidateService(t *testing.T) {
	for field, svc := range map[string]*corev1.Service{
		"spec.sessionAffinity": testService(func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }),
		"spec.loadBalancerIP":  testService(func(s *corev1.Service) { s.Spec.LoadBalancerIP = "109.107.1.1" }),
		"spec.loadBalancerSourceRanges": testService(func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
		}),
		"spec.ports[1].protocol": testService(func(s *corev1.Service) { s.Spec.Ports[1].Protocol = corev1.ProtocolUDP }),
		"spec.ports[0].nodePort": testService(func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 0 }),
		"spec.ports":             testService(func(s *corev1.Service) { s.Spec.Ports = nil }),
	} {
		err := validateService(&lbRequest{Service: svc, Config: decoded(t, nil)})
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("validateService: %v, want an error naming %s", err, field)
		}
	}
	no443 := testService(func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[1:] })
	cfg := decoded(t, map[string]string{AnnotationPrefix + "ssl-domains": "a.example.com"})
	if err := validateService(&lbRequest{Service: no443, Config: cfg}); err == nil || !strings.Contains(err.Error(), "443") {
		t.Errorf("ssl-domains without a port 443: %v, want an error", err)
	}
	if err := validateService(&lbRequest{Service: testService(), Config: cfg}); err != nil {
		t.Errorf("a valid Service: %v", err)
	}
}
