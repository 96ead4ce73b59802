package triton

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

func TestDesiredMetadata(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{
		Type:  corev1.ServiceTypeLoadBalancer,
		Ports: []corev1.ServicePort{{Port: 443, NodePort: 30443}, {Port: 80, NodePort: 30080}},
	}}
	target := moiraiTarget{backend: "k8s-c-nodes.svc.acct.dc.cns.joyent.com", nodes: 40, proxyHealth: 10256}
	cfg := &LoadBalancerConfig{ListenerType: listenerHTTPSHTTP, CertificateName: []string{"WWW.example.com"},
		Timeouts:   timeoutsConfig{Connect: 5 * time.Second, Server: 3 * time.Minute},
		MetricsACL: []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")}}
	want := map[string]string{
		mdLoadBalancer:    "true",
		mdPortmap:         "https-http://80:k8s-c-nodes.svc.acct.dc.cns.joyent.com:30080{check:/healthz,port:10256},https-http://443:k8s-c-nodes.svc.acct.dc.cns.joyent.com:30443{check:/healthz,port:10256}",
		mdMaxRS:           "64",
		mdCertificateName: "www.example.com",
		mdTimeouts:        "{connect:5000ms,server:180000ms}",
		mdMetricsACL:      "10.0.0.0/8",
	}
	if diff := cmp.Diff(want, desiredMetadata(&lbRequest{Service: svc, Config: cfg}, target)); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	svc.Spec.ExternalTrafficPolicy, svc.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 31999
	if got := portmap(svc, listenerTCP, target); got != "tcp://80:"+target.backend+":30080{check:/healthz,port:31999},tcp://443:"+target.backend+":30443{check:/healthz,port:31999}" {
		t.Errorf("portmap with externalTrafficPolicy Local = %q", got)
	}
	for _, tc := range []struct {
		annotated   uint
		nodes, want int
	}{{0, 3, 32}, {0, 100, 128}, {0, 1000, 1024}, {0, 1001, 1024}, {64, 3, 64}, {64, 65, 96}, {0, 5000, 1024}} {
		if got := maxRS(tc.annotated, tc.nodes); got != tc.want {
			t.Errorf("maxRS(%d, %d) = %d, want %d", tc.annotated, tc.nodes, got, tc.want)
		}
	}
}

func TestDesiredRules(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if got := desiredRules(svc, &LoadBalancerConfig{}, "m1"); !cmp.Equal(got, []string{"FROM any TO vm m1 ALLOW tcp PORT 80"}) {
		t.Errorf("no ranges: %q", got)
	}
	svc.Spec.LoadBalancerSourceRanges = []string{"0.0.0.0/0"}
	if got := desiredRules(svc, &LoadBalancerConfig{}, "m1"); !cmp.Equal(got, []string{"FROM any TO vm m1 ALLOW tcp PORT 80"}) {
		t.Errorf("0.0.0.0/0: %q", got)
	}
	svc.Spec.LoadBalancerSourceRanges = nil
	for i := range 30 {
		svc.Spec.LoadBalancerSourceRanges = append(svc.Spec.LoadBalancerSourceRanges, fmt.Sprintf("10.%d.0.0/16", i))
	}
	if got := desiredRules(svc, &LoadBalancerConfig{}, "m1"); len(got) != 2 {
		t.Errorf("30 ranges make %d rules, want 2 (24 sources a rule)", len(got))
	}
}

func TestValidateService(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{
		SessionAffinity: corev1.ServiceAffinityClientIP, LoadBalancerIP: "192.0.2.1",
		LoadBalancerSourceRanges: []string{"192.0.2.0/24"},
		Ports:                    []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30053}, {Port: 65535, NodePort: 0}},
	}}
	err := validateService(&lbRequest{Service: svc, Config: &LoadBalancerConfig{Mode: modeCNS}})
	for _, field := range []string{"spec.sessionAffinity", "spec.loadBalancerIP", "spec.ports[0].protocol", "spec.ports[1].nodePort", "spec.ports[1].port", "spec.loadBalancerSourceRanges"} {
		if err == nil || !contains(err.Error(), field) {
			t.Errorf("validateService: %v, want %s named", err, field)
		}
	}
}

func TestLoadBalancerConfigTags(t *testing.T) {
	if _, err := annotations.Fields(AnnotationPrefix, &LoadBalancerConfig{}); err != nil {
		t.Fatalf("struct tags: %v", err)
	}
	var cfg LoadBalancerConfig
	_, err := annotations.Decode(map[string]string{
		AnnotationPrefix + "mode":           "cns",
		AnnotationPrefix + "max-backends":   "64",
		AnnotationPrefix + "timeout-client": "1500",
	}, AnnotationPrefix, &cfg)
	if err != nil || cfg.MaxBackends != 64 || cfg.Timeouts.Client != 1500*time.Millisecond || cfg.ListenerType != listenerTCP {
		t.Fatalf("decode: %v %+v", err, cfg)
	}
	if err := cfg.Validate(); err == nil || !contains(err.Error(), "max-backends") || !contains(err.Error(), "timeout-*") {
		t.Errorf("Moirai annotations on a CNS Service: %v", err)
	}
	if err := (&LoadBalancerConfig{CertificateName: []string{"not a name"}}).Validate(); err == nil {
		t.Error("a certificate name with spaces passed")
	}
	bad := LoadBalancerSettings{Mode: "haproxy", KubeProxyHealthPort: 70000, NodeService: "Nodes", CNSPublicZone: "a..b"}
	err = bad.validate()
	for _, env := range []string{"TRITON_LB_MODE", "TRITON_LB_KUBE_PROXY_HEALTH_PORT", "TRITON_LB_NODE_SERVICE", "TRITON_CNS_PUBLIC_ZONE"} {
		if err == nil || !contains(err.Error(), env) {
			t.Errorf("validate: %v, want %s named", err, env)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
