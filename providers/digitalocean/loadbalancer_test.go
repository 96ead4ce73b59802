package digitalocean_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// lbFixture is the provider's load balancers on a simulated DigitalOcean
// (frameworktest.LBFixture) with two droplets, node-b and node-a, and the
// simulator, for what DigitalOcean holds.
type lbFixture struct {
	*frameworktest.LBFixture
	sim *dosim.Server
}

// newLBFixture starts a simulator and the provider on it; opts adds
// settings (opts.Env) or sets the load-balancer list's TTL.
func newLBFixture(t *testing.T, opts frameworktest.LBOptions) *lbFixture {
	t.Helper()
	sim := dosim.NewServer(t, dosim.Options{})
	opts.Nodes = []string{"node-b", "node-a"}
	opts.Ports = []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
	}
	// A UUID, as the API server makes it: DigitalOcean names a load
	// balancer after its Service's UID.
	opts.UID = func(name string) types.UID {
		return types.UID("1234abcd-0000-4000-8000-" + strings.Repeat("0", 12-len(name)) + name)
	}
	return &lbFixture{frameworktest.NewLBFixture(t, target(sim), opts), sim}
}

// only returns the simulator's one load balancer.
func (f *lbFixture) only(t *testing.T) dosim.LoadBalancer {
	t.Helper()
	lbs := f.sim.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("the cloud holds %d load balancers, want 1", len(lbs))
	}
	return lbs[0]
}

// TestLoadBalancerAnnotations creates a load balancer per annotation set,
// checks what the cloud holds, and checks that a second sync writes
// nothing: the diff must understand every default the API fills in.
func TestLoadBalancerAnnotations(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	cases := []struct {
		name   string
		ann    map[string]string
		mutate func(*corev1.Service)
		check  func(t *testing.T, lb dosim.LoadBalancer)
	}{{
		name: "defaults",
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			wantRules := []dosim.ForwardingRule{
				{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 30080},
				{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053},
			}
			if !slices.Equal(lb.ForwardingRules, wantRules) {
				t.Errorf("rules = %+v, want %+v", lb.ForwardingRules, wantRules)
			}
			// kube-proxy's health endpoint, as the existing CCM.
			if hc := lb.HealthCheck; hc.Protocol != "http" || hc.Port != 10256 || hc.Path != "/healthz" || hc.CheckIntervalSeconds != 3 || hc.ResponseTimeoutSeconds != 5 || hc.UnhealthyThreshold != 3 || hc.HealthyThreshold != 5 {
				t.Errorf("health check = %+v", hc)
			}
			if lb.Type != "REGIONAL_NETWORK" || lb.Network != "EXTERNAL" || lb.NetworkStack != "IPV4" || !strings.HasPrefix(lb.Name, "a1234abcd") {
				t.Errorf("type %q network %q stack %q name %q", lb.Type, lb.Network, lb.NetworkStack, lb.Name)
			}
			if len(lb.DropletIDs) != 2 || lb.Firewall != nil && len(lb.Firewall.Allow)+len(lb.Firewall.Deny) > 0 {
				t.Errorf("droplets %v firewall %+v", lb.DropletIDs, lb.Firewall)
			}
		},
	}, {
		name: "externalTrafficPolicy Local probes the health check node port",
		mutate: func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 32000
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			if hc := lb.HealthCheck; hc.Protocol != "http" || hc.Port != 32000 || hc.Path != "/healthz" {
				t.Errorf("health check = %+v", hc)
			}
		},
	}, {
		name: "health-check annotations are honoured",
		ann: map[string]string{
			p + "healthcheck-protocol": "http", p + "healthcheck-path": "/ready", p + "healthcheck-port": "80",
			p + "healthcheck-check-interval-seconds": "10", p + "healthcheck-response-timeout-seconds": "7",
			p + "healthcheck-unhealthy-threshold": "4", p + "healthcheck-healthy-threshold": "2",
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			want := dosim.HealthCheck{Protocol: "http", Port: 30080, Path: "/ready", CheckIntervalSeconds: 10, ResponseTimeoutSeconds: 7, UnhealthyThreshold: 4, HealthyThreshold: 2}
			if hc := *lb.HealthCheck; hc != want {
				t.Errorf("health check = %+v, want %+v", hc, want)
			}
		},
	}, {
		name: "https with a certificate, http redirect, sticky cookies, REGIONAL",
		ann: map[string]string{
			p + "type": "REGIONAL", p + "protocol": "http", p + "certificate-id": "CERT", p + "redirect-http-to-https": "true",
			p + "sticky-sessions-type": "cookies", p + "sticky-sessions-cookie-name": "s", p + "sticky-sessions-cookie-ttl": "300",
			p + "http-idle-timeout-seconds": "120", p + "enable-backend-keepalive": "true", p + "size-unit": "3",
		},
		mutate: func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Port: 80, NodePort: 30080}, {Port: 443, NodePort: 30443}}
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			if lb.Type != "REGIONAL" || !lb.RedirectHttpToHttps || !lb.EnableBackendKeepalive || *lb.HTTPIdleTimeoutSeconds != 120 || lb.SizeUnit != 3 {
				t.Errorf("lb = %+v", lb)
			}
			r := lb.ForwardingRules
			if len(r) != 2 || r[0].EntryProtocol != "http" || r[1].EntryProtocol != "https" || r[1].TargetProtocol != "http" || r[1].CertificateID == "" {
				t.Errorf("rules = %+v", r)
			}
			if s := lb.StickySessions; s.Type != "cookies" || s.CookieName != "s" || s.CookieTtlSeconds != 300 {
				t.Errorf("sticky = %+v", s)
			}
		},
	}, {
		name: "tls passthrough and http2 ports",
		ann:  map[string]string{p + "type": "REGIONAL", p + "tls-passthrough": "true", p + "http2-ports": "8443"},
		mutate: func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Port: 443, NodePort: 30443}, {Port: 8443, NodePort: 30843}}
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			want := []dosim.ForwardingRule{
				{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "https", TargetPort: 30443, TlsPassthrough: true},
				{EntryProtocol: "http2", EntryPort: 8443, TargetProtocol: "http2", TargetPort: 30843, TlsPassthrough: true},
			}
			if !slices.Equal(lb.ForwardingRules, want) {
				t.Errorf("rules = %+v, want %+v", lb.ForwardingRules, want)
			}
		},
	}, {
		name: "source ranges become the load balancer firewall",
		ann:  map[string]string{p + "allow-rules": "ip:1.2.3.4", p + "deny-rules": "cidr:10.9.0.0/16"},
		mutate: func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.168.0.0/16", "203.0.113.0/24"}
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			fw := lb.Firewall
			if fw == nil || !slices.Equal(fw.Allow, []string{"cidr:192.168.0.0/16", "cidr:203.0.113.0/24"}) || !slices.Equal(fw.Deny, []string{"cidr:10.9.0.0/16"}) {
				t.Errorf("firewall = %+v", fw)
			}
		},
	}, {
		name: "internal dual-stack with proxy protocol and a name",
		ann: map[string]string{
			p + "network": "INTERNAL", p + "network-stack": "DUALSTACK", p + "enable-proxy-protocol": "true",
			p + "name": "my-lb.example", p + "size-unit": "2",
		},
		check: func(t *testing.T, lb dosim.LoadBalancer) {
			if lb.Network != "INTERNAL" || lb.NetworkStack != "DUALSTACK" || !lb.EnableProxyProtocol || lb.Name != "my-lb.example" || lb.IPv6 == "" {
				t.Errorf("lb = %+v", lb)
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			f.sim.AddCertificate(dosim.Certificate{ID: "CERT", Name: "web"})
			mutate := func(*corev1.Service) {}
			if tc.mutate != nil {
				mutate = tc.mutate
			}
			svc := f.Service(t, "web", tc.ann, mutate)
			status := f.EnsureReady(t, svc)
			lb := f.only(t)
			tc.check(t, lb)
			if len(status.Ingress) == 0 || status.Ingress[0].IP != lb.IP {
				t.Errorf("status = %+v, want the load balancer's IP %s", status, lb.IP)
			}
			if got := f.Fresh(t, svc).Annotations[digitalocean.AnnotationLoadBalancerID]; got != lb.ID {
				t.Errorf("ID annotation = %q, want %q", got, lb.ID)
			}
			if w := f.WritesDuring(func() { f.EnsureReady(t, svc) }); w != 0 {
				t.Errorf("a sync with nothing changed made %d writes", w)
			}
		})
	}
}

func TestLoadBalancerStatus(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	f := newLBFixture(t, frameworktest.LBOptions{})
	proxy := f.EnsureReady(t, f.Service(t, "proxy", map[string]string{p + "enable-proxy-protocol": "true"}))
	if ing := proxy.Ingress; len(ing) != 1 || ing[0].IPMode == nil || *ing[0].IPMode != corev1.LoadBalancerIPModeProxy {
		t.Errorf("proxy protocol status = %+v, want ipMode Proxy", ing)
	}
	host := f.EnsureReady(t, f.Service(t, "host", map[string]string{p + "hostname": "lb.example.com"}))
	if ing := host.Ingress; len(ing) != 1 || ing[0].Hostname != "lb.example.com" || ing[0].IP != "" {
		t.Errorf("hostname status = %+v", ing)
	}
}

// TestLoadBalancerMigration adopts a load balancer the existing CCM made:
// the Service carries its annotations and the ID annotation; nothing is
// created and the load balancer keeps its ID and address.
func TestLoadBalancerMigration(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	f := newLBFixture(t, frameworktest.LBOptions{Env: map[string]string{"DO_CLUSTER_ID": "c0ffee"}})
	old := f.sim.AddLoadBalancer(dosim.LoadBalancer{
		Name: "a1234abcd000040008000000000000web"[:32], Type: "REGIONAL", Status: dosim.LBStatusActive,
		ForwardingRules: []dosim.ForwardingRule{{EntryProtocol: "http", EntryPort: 80, TargetProtocol: "http", TargetPort: 30080}},
		HealthCheck:     &dosim.HealthCheck{Protocol: "tcp", Port: 30080, CheckIntervalSeconds: 3, ResponseTimeoutSeconds: 5, UnhealthyThreshold: 3, HealthyThreshold: 5},
		Tags:            []string{"k8s:c0ffee", "team:web"},
	})
	svc := f.Service(t, "web", map[string]string{
		digitalocean.AnnotationLoadBalancerID: old.ID,
		p + "protocol":                        "http",
		p + "type":                            "REGIONAL",
		p + "override-health-check":           "true",
	}, func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] })
	status := f.EnsureReady(t, svc)

	lb := f.only(t)
	if lb.ID != old.ID || lb.IP != old.IP || status.Ingress[0].IP != old.IP {
		t.Fatalf("adopted LB %s (%s), want %s (%s)", lb.ID, lb.IP, old.ID, old.IP)
	}
	if st := f.sim.Stats(); st["POST /v2/load_balancers"] != 0 {
		t.Errorf("a load balancer was created: %v", st)
	}
	if !slices.Contains(lb.Tags, "team:web") || !slices.Contains(lb.Tags, "k8s:c0ffee") || len(lb.DropletIDs) != 2 {
		t.Errorf("after adoption: tags %v droplets %v", lb.Tags, lb.DropletIDs)
	}
}

// TestInvalidAnnotation: a bad value is a Warning Event naming the key,
// and the cloud sees no write.
func TestInvalidAnnotation(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	key := digitalocean.AnnotationPrefix + "healthcheck-check-interval-seconds"
	svc := f.Service(t, "web", map[string]string{key: "abc"})
	var err error
	w := f.WritesDuring(func() { _, err = f.Ensure(t, svc) })
	if err == nil || !strings.Contains(err.Error(), key) {
		t.Fatalf("err = %v, want one naming %s", err, key)
	}
	if w != 0 {
		t.Errorf("%d cloud writes for an invalid Service", w)
	}
	evs := f.Drain()
	if len(evs) == 0 || !strings.HasPrefix(evs[0], "Warning") || !strings.Contains(evs[0], key) {
		t.Errorf("events = %q, want a Warning naming %s", evs, key)
	}
}

// TestEveryProblemInOneWarning: a value that does not decode does not hide
// the name, health-check path and firewall rule checks: one Warning lists
// all four.
func TestEveryProblemInOneWarning(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", map[string]string{
		p + "healthcheck-check-interval-seconds": "abc",
		p + "name":                               "-not a name-",
		p + "healthcheck-path":                   "no-slash",
		p + "deny-rules":                         "1.2.3.4",
	})
	if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil {
		t.Fatal("EnsureLoadBalancer succeeded")
	}
	evs := f.Drain()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning InvalidAnnotation") {
		t.Fatalf("events = %q, want one Warning", evs)
	}
	for _, key := range []string{"healthcheck-check-interval-seconds", "name", "healthcheck-path", "deny-rules"} {
		if !strings.Contains(evs[0], p+key+`"`) {
			t.Errorf("the Warning does not name %s: %s", p+key, evs[0])
		}
	}
}

func TestInvalidCombinations(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	for name, ann := range map[string]map[string]string{
		"size slug and unit":          {p + "type": "REGIONAL", p + "size-slug": "lb-small", p + "size-unit": "2"},
		"https without certificate":   {p + "protocol": "https", p + "type": "REGIONAL"},
		"http on REGIONAL_NETWORK":    {p + "protocol": "http", p + "type": "REGIONAL_NETWORK"},
		"cookies without a name":      {p + "sticky-sessions-type": "cookies"},
		"bad firewall rule":           {p + "allow-rules": "1.2.3.4"},
		"health check on a UDP port":  {p + "healthcheck-port": "53"},
		"health check on a lost port": {p + "healthcheck-port": "8080"},
		"certificate id and name":     {p + "type": "REGIONAL", p + "certificate-id": "a", p + "certificate-name": "b"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			svc := f.Service(t, "web", ann)
			if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil {
				t.Fatal("EnsureLoadBalancer succeeded")
			}
			if len(f.sim.LoadBalancers()) != 0 || f.sim.Writes() != 0 {
				t.Errorf("cloud written: %d LBs, %d writes", len(f.sim.LoadBalancers()), f.sim.Writes())
			}
			if evs := f.Drain(); len(evs) == 0 || !strings.HasPrefix(evs[0], "Warning") {
				t.Errorf("events = %q, want a Warning", evs)
			}
		})
	}
}

// TestLetsEncryptRenewal: DigitalOcean renews a Let's Encrypt certificate
// under a new ID and moves the load balancer to it. The CCM follows instead
// of failing on the stale annotation, and records the new ID.
func TestLetsEncryptRenewal(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	f := newLBFixture(t, frameworktest.LBOptions{CacheTTL: -1}) // sees changes made behind its back at once
	f.sim.AddCertificate(dosim.Certificate{ID: "le-1", Name: "web-le", Type: "lets_encrypt"})
	svc := f.Service(t, "web", map[string]string{p + "type": "REGIONAL", p + "certificate-id": "le-1"},
		func(s *corev1.Service) { s.Spec.Ports = []corev1.ServicePort{{Port: 443, NodePort: 30443}} })
	f.EnsureReady(t, svc)

	// The renewal, as DigitalOcean does it.
	lb := f.only(t)
	f.sim.AddCertificate(dosim.Certificate{ID: "le-2", Name: "web-le", Type: "lets_encrypt"})
	f.sim.DeleteCertificate("le-1")
	lb.ForwardingRules[0].CertificateID = "le-2"
	f.sim.AddLoadBalancer(lb)

	before := f.sim.Writes()
	f.EnsureReady(t, svc)
	if got := f.only(t).ForwardingRules[0].CertificateID; got != "le-2" {
		t.Errorf("certificate = %s, want le-2", got)
	}
	if w := f.sim.Writes() - before; w != 0 {
		t.Errorf("%d writes following a renewal, want 0", w)
	}
	if got := f.Fresh(t, svc).Annotations[p+"certificate-id"]; got != "le-2" {
		t.Errorf("certificate-id annotation = %q, want le-2", got)
	}
}

func TestCertificateName(t *testing.T) {
	p := digitalocean.AnnotationPrefix
	f := newLBFixture(t, frameworktest.LBOptions{CacheTTL: -1}) // sees changes made behind its back at once
	f.sim.AddCertificate(dosim.Certificate{ID: "c-1", Name: "shop"})
	svc := f.Service(t, "web", map[string]string{p + "type": "REGIONAL", p + "certificate-name": "shop"},
		func(s *corev1.Service) { s.Spec.Ports = []corev1.ServicePort{{Port: 443, NodePort: 30443}} })
	f.EnsureReady(t, svc)
	if got := f.only(t).ForwardingRules[0].CertificateID; got != "c-1" {
		t.Fatalf("certificate = %s, want c-1", got)
	}
	// A renewal under the same name is picked up on the next sync.
	f.sim.AddCertificate(dosim.Certificate{ID: "c-2", Name: "shop"})
	f.sim.DeleteCertificate("c-1")
	f.EnsureReady(t, svc)
	if got := f.only(t).ForwardingRules[0].CertificateID; got != "c-2" {
		t.Errorf("certificate after renewal = %s, want c-2", got)
	}
}

func TestDisown(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations[digitalocean.AnnotationDisown] = "true"
		s.Spec.Ports[0].NodePort = 31111
	})
	before := f.sim.Writes()
	f.EnsureReady(t, svc)
	f.Drain()
	if err := f.Delete(t, svc); err != nil {
		t.Fatal(err)
	}
	if w := f.sim.Writes() - before; w != 0 || len(f.sim.LoadBalancers()) != 1 {
		t.Errorf("disowned load balancer: %d writes, %d left", w, len(f.sim.LoadBalancers()))
	}
	// Left in place, it is not reported deleted, and the shared list still
	// holds it: a lookup costs no call.
	if evs := f.Drain(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Normal KeptLoadBalancer") {
		t.Errorf("events = %q, want one Normal KeptLoadBalancer", evs)
	}
	calls := f.sim.Stats()
	if _, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc)); err != nil || !exists {
		t.Errorf("GetLoadBalancer after the disowned delete = %v, %v; want it still there", exists, err)
	}
	if diff := cmp.Diff(calls, f.sim.Stats()); diff != "" {
		t.Errorf("GetLoadBalancer after the disowned delete called the API (-before +after):\n%s", diff)
	}
}

func TestErroredLoadBalancer(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{CacheTTL: -1}) // sees changes made behind its back at once
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	f.sim.SetLoadBalancerStatus(f.only(t).ID, dosim.LBStatusErrored)
	f.Drain()
	_, err := f.Ensure(t, svc)
	if err == nil || !strings.Contains(err.Error(), "error") {
		t.Fatalf("err = %v, want an error state", err)
	}
	if evs := f.Drain(); !slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, "Warning LoadBalancerFailed") }) {
		t.Errorf("events = %q, want Warning LoadBalancerFailed", evs)
	}
}

// TestAPIErrorsDeleteNothing: with the token rejected, a delete fails and
// the load balancer stays.
func TestAPIErrorsDeleteNothing(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	restore := f.sim.Fail(401)
	err := f.Delete(t, svc)
	restore()
	if err == nil {
		t.Fatal("EnsureLoadBalancerDeleted succeeded with the API answering 401")
	}
	if len(f.sim.LoadBalancers()) != 1 {
		t.Error("the load balancer was deleted")
	}
	if err := f.Delete(t, svc); err != nil {
		t.Fatal(err)
	}
	if len(f.sim.LoadBalancers()) != 0 {
		t.Error("the load balancer is still there")
	}
}
