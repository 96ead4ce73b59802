package digitalocean

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

const (
	testFirewallName = "k8s-public-access"
	testWorkerTag    = "k8s-worker"
)

type svcOpt func(*corev1.Service)

func testService(name string, typ corev1.ServiceType, opts ...svcOpt) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{}},
		Spec:       corev1.ServiceSpec{Type: typ},
	}
	for _, o := range opts {
		o(svc)
	}
	return svc
}

func port(proto corev1.Protocol, p, nodePort int32) svcOpt {
	return func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Protocol: proto, Port: p, NodePort: nodePort})
	}
}

func annotate(k, v string) svcOpt {
	return func(s *corev1.Service) { s.Annotations[k] = v }
}

func localTraffic(hcNodePort int32) svcOpt {
	return func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = hcNodePort
	}
}

// rules renders inbound rules as "tcp:30080 <sources>" for comparing.
func rules(in []godo.InboundRule) []string {
	out := []string{}
	for _, r := range in {
		s := r.Protocol + ":" + r.PortRange
		if r.Sources != nil {
			if len(r.Sources.Addresses) > 0 {
				s += " " + strings.Join(r.Sources.Addresses, ",")
			}
			if len(r.Sources.LoadBalancerUIDs) > 0 {
				s += " lb:" + strings.Join(r.Sources.LoadBalancerUIDs, ",")
			}
		}
		out = append(out, s)
	}
	return out
}

const all = "0.0.0.0/0,::/0"

func TestFirewallDesiredRules(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	spec := firewallSpec{name: testFirewallName, tags: []string{testWorkerTag}, defaultLBType: LoadBalancerTypeRegionalNetwork}
	regional := annotate(firewallAnnLBType, LoadBalancerTypeRegional)
	tests := []struct {
		name string
		svcs []*corev1.Service
		want []string
	}{
		{name: "no Services", want: []string{}},
		{
			name: "NodePort ports, tcp and udp, sorted",
			svcs: []*corev1.Service{
				testService("b", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 31000), port(corev1.ProtocolUDP, 53, 30053)),
				testService("a", corev1.ServiceTypeNodePort, port("", 8080, 30080), port(corev1.ProtocolTCP, 9090, 30999)),
			},
			want: []string{"tcp:30080 " + all, "tcp:30999 " + all, "tcp:31000 " + all, "udp:30053 " + all},
		},
		{
			name: "ClusterIP, ExternalName, SCTP and unallocated ports open nothing",
			svcs: []*corev1.Service{
				testService("cip", corev1.ServiceTypeClusterIP, port(corev1.ProtocolTCP, 80, 0)),
				testService("ext", corev1.ServiceTypeExternalName),
				testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolSCTP, 80, 30001), port(corev1.ProtocolTCP, 81, 0)),
			},
			want: []string{},
		},
		{
			name: "firewall-managed false leaves the Service out; a non-boolean is ignored",
			svcs: []*corev1.Service{
				testService("off", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30001), annotate(AnnotationFirewallManaged, "false")),
				testService("on", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30002), annotate(AnnotationFirewallManaged, "true")),
				testService("typo", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30003), annotate(AnnotationFirewallManaged, "nope")),
				testService("lb-off", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 443, 30004), annotate(AnnotationFirewallManaged, "False")),
			},
			want: []string{"tcp:30002 " + all, "tcp:30003 " + all},
		},
		{
			name: "REGIONAL_NETWORK external load balancer: Service ports and kube-proxy's health port",
			svcs: []*corev1.Service{
				testService("lb", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 443, 30443), port(corev1.ProtocolUDP, 443, 30444)),
			},
			want: []string{"tcp:443 " + all, "tcp:10256 " + all, "udp:443 " + all},
		},
		{
			name: "health port open to the load balancer alone once its ID is known; Local uses the healthCheckNodePort",
			svcs: []*corev1.Service{
				testService("lb", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 80, 30080),
					annotate(firewallAnnLBID, "lb-uuid-1"), localTraffic(32000)),
			},
			want: []string{"tcp:80 " + all, "tcp:32000 lb:lb-uuid-1"},
		},
		{
			name: "REGIONAL and INTERNAL load balancers reach the nodes over the VPC: nothing",
			svcs: []*corev1.Service{
				testService("regional", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 80, 30080), regional),
				testService("internal", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 81, 30081), annotate(firewallAnnLBNetwork, "INTERNAL")),
				testService("bad-type", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 82, 30082), annotate(firewallAnnLBType, "GLOBAL")),
			},
			want: []string{},
		},
		{
			name: "the same port twice is one rule",
			svcs: []*corev1.Service{
				testService("lb1", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 80, 30080)),
				testService("lb2", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 80, 30081), annotate(firewallAnnLBType, "regional_network")),
			},
			want: []string{"tcp:80 " + all, "tcp:10256 " + all},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := spec.desiredFirewall(logger, tt.svcs)
			if diff := cmp.Diff(tt.want, rules(got.InboundRules)); diff != "" {
				t.Errorf("inbound rules (-want +got):\n%s", diff)
			}
			if got.Name != testFirewallName || !cmp.Equal(got.Tags, []string{testWorkerTag}) {
				t.Errorf("name, tags = %q, %q", got.Name, got.Tags)
			}
			if len(got.DropletIDs) != 0 {
				t.Errorf("droplet IDs = %v, want none", got.DropletIDs)
			}
		})
	}

	t.Run("REGIONAL by default opens nothing for load balancers", func(t *testing.T) {
		spec := spec
		spec.defaultLBType = LoadBalancerTypeRegional
		got := spec.desiredFirewall(logger, []*corev1.Service{testService("lb", corev1.ServiceTypeLoadBalancer, port(corev1.ProtocolTCP, 80, 30080))})
		if len(got.InboundRules) != 0 {
			t.Errorf("inbound rules = %v, want none", rules(got.InboundRules))
		}
	})
}

// TestFirewallDiff: what the API answers differently from what was asked
// ("0" for "all", another order, an explicit allow action) is no
// difference; a changed port, tag or name is.
func TestFirewallDiff(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	spec := firewallSpec{name: testFirewallName, tags: []string{"a", "b"}, defaultLBType: LoadBalancerTypeRegional}
	want := spec.desiredFirewall(logger, []*corev1.Service{
		testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080), port(corev1.ProtocolUDP, 53, 30053)),
	})
	answered := func() *godo.Firewall {
		fw := &godo.Firewall{ID: "x", Name: testFirewallName, Tags: []string{"b", "a"}, Status: "succeeded"}
		for i := len(want.InboundRules) - 1; i >= 0; i-- {
			r := want.InboundRules[i]
			r.Action = godo.FirewallRuleActionAllow
			r.Sources = &godo.Sources{Addresses: []string{"::/0", "0.0.0.0/0"}}
			fw.InboundRules = append(fw.InboundRules, r)
		}
		for _, r := range want.OutboundRules {
			if r.PortRange == "all" {
				r.PortRange = "0"
			}
			fw.OutboundRules = append(fw.OutboundRules, r)
		}
		return fw
	}
	if added, removed := firewallDiff(answered(), want); len(added)+len(removed) != 0 {
		t.Fatalf("the API's answer differs: added %v, removed %v", added, removed)
	}
	changes := map[string]func(*godo.Firewall){
		"port":     func(fw *godo.Firewall) { fw.InboundRules[0].PortRange = "30081" },
		"protocol": func(fw *godo.Firewall) { fw.InboundRules[0].Protocol = "tcp" },
		"source":   func(fw *godo.Firewall) { fw.InboundRules[0].Sources.Addresses = []string{"10.0.0.0/8"} },
		"tag":      func(fw *godo.Firewall) { fw.Tags = []string{"a"} },
		"name":     func(fw *godo.Firewall) { fw.Name = "renamed" },
		"droplet":  func(fw *godo.Firewall) { fw.DropletIDs = []int{7} },
		"outbound": func(fw *godo.Firewall) { fw.OutboundRules = fw.OutboundRules[1:] },
	}
	for name, change := range changes {
		fw := answered()
		change(fw)
		if added, removed := firewallDiff(fw, want); len(added)+len(removed) == 0 {
			t.Errorf("%s: a changed firewall compares equal", name)
		}
	}
}

// fwHarness is the controller against dosim (real godo over HTTP) and a
// fake clientset with real informers.
func TestFirewallControllerRegistered(t *testing.T) {
	cs := New().Controllers()
	if len(cs) != 1 || cs[0].Name != "public-access-firewall" || FirewallControllerName != "public-access-firewall" || cs[0].Run == nil {
		t.Fatalf("Controllers() = %+v, want one called public-access-firewall", cs)
	}
}

// TestFirewallDisabled: without the settings the controller makes no
// firewall call and returns at once. One without the other is a start-up
// error (TestFirewallHalfConfigured), as in the existing CCM.
func TestFirewallDisabled(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"nothing set": {},
	} {
		t.Run(name, func(t *testing.T) {
			h := newFWHarness(t)
			h.createService(testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080)))
			p := h.provider(vars)
			ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
			defer cancel()
			if err := p.Controllers()[0].Run(ctx, h.env()); err != nil {
				t.Errorf("Run = %v", err)
			}
			if ctx.Err() != nil {
				t.Error("Run blocked until its context ended")
			}
			if calls := firewallCalls(h.sim); len(calls) != 0 {
				t.Errorf("firewall API calls: %v", calls)
			}
		})
	}
}

// TestFirewallControllerRun runs the registered controller as the CCM
// does: it creates the firewall for the Services that exist, with the
// configured name and tags and outbound open, and the next Service opens
// its port.
func TestFirewallControllerRun(t *testing.T) {
	h := newFWHarness(t)
	h.createService(testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080)))
	h.createService(testService("cip", corev1.ServiceTypeClusterIP, port(corev1.ProtocolTCP, 80, 0)))
	p := h.provider(enabled)
	ctx, cancel := context.WithCancel(h.ctx)
	env := h.env()
	done := make(chan error)
	go func() { done <- p.Controllers()[0].Run(ctx, env) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		env.Informers.Shutdown()
	}()

	// The registered controller runs on the real clock: its 1s batch.
	fw := h.waitForRules("the firewall created", 0, "tcp:30080 "+all)
	if !cmp.Equal(fw.Tags, []string{testWorkerTag}) || len(fw.DropletIDs) != 0 {
		t.Errorf("tags, droplets = %v, %v; want [%s], none", fw.Tags, fw.DropletIDs, testWorkerTag)
	}
	var out []string
	for _, r := range fw.OutboundRules {
		out = append(out, fmt.Sprintf("%s:%s %s", r.Protocol, r.PortRange, strings.Join(r.Destinations.Addresses, ",")))
	}
	// As the API answers "all" ports and ICMP: "0" (dosim follows it).
	if diff := cmp.Diff([]string{"icmp:0 " + all, "tcp:0 " + all, "udp:0 " + all}, out); diff != "" {
		t.Errorf("outbound rules (-want +got):\n%s", diff)
	}
	h.createService(testService("dns", corev1.ServiceTypeNodePort, port(corev1.ProtocolUDP, 53, 30053)))
	h.waitForRules("the udp NodePort opened", 0, "tcp:30080 "+all, "udp:30053 "+all)
	if got := h.sim.Stats()["POST /v2/firewalls"]; got != 1 {
		t.Errorf("%d creates, want 1", got)
	}
	noDeletes(t, h.sim)
}

// TestFirewallReconcile: a changed NodePort is one update; a Service
// change that changes no rule costs no API call at all, and a resync with
// nothing changed one read and no write; a burst of Services coalesces.
// The batch delay and the resync run on the fake clock.
func TestFirewallReconcile(t *testing.T) {
	h := newFWHarness(t)
	svc := testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080))
	h.createService(svc)
	h.start(firewallOptions{})
	h.waitForRules("the firewall created", 0, "tcp:30080 "+all) // the first reconcile is not delayed

	svc.Spec.Ports[0].NodePort = 30081
	h.updateService(svc)
	h.waitForRules("the new NodePort", firewallBatch, "tcp:30081 "+all)
	if got := h.sim.Stats()["PUT /v2/firewalls/{id}"]; got != 1 {
		t.Errorf("%d updates for one changed NodePort, want 1", got)
	}

	// Nothing that changes a rule: no call for the change itself, then a
	// read per resync, and never a write or a list.
	writes, calls := h.sim.Writes(), firewallCalls(h.sim)
	h.createService(testService("cip", corev1.ServiceTypeClusterIP, port(corev1.ProtocolTCP, 80, 0)))
	svc.Labels = map[string]string{"touched": "yes"}
	h.updateService(svc)
	h.waitForServices(2)
	h.clock.Step(firewallBatch) // the reconcile of the changes: no call
	resyncFrom := h.clock.Now()
	for i := 1; i <= 3; i++ {
		h.stepUntil(fmt.Sprintf("resync %d reads the firewall", i), firewallResync, func() bool {
			return firewallCalls(h.sim)["GET /v2/firewalls/{id}"]-calls["GET /v2/firewalls/{id}"] >= i
		})
	}
	if got := h.sim.Writes(); got != writes {
		t.Errorf("%d writes with nothing changed", got-writes)
	}
	after := firewallCalls(h.sim)
	// stepUntil may step once more than needed while a read is under way.
	resyncs := int(h.clock.Since(resyncFrom) / firewallResync)
	if gets := after["GET /v2/firewalls/{id}"] - calls["GET /v2/firewalls/{id}"]; gets > resyncs {
		t.Errorf("%d reads of the firewall in %d resyncs, want at most one each", gets, resyncs)
	}
	if after["GET /v2/firewalls"] != calls["GET /v2/firewalls"] {
		t.Errorf("the firewall was listed again although its ID was known: %v -> %v", calls, after)
	}

	// A burst of 20 Services, all seen within one batch delay: one update.
	puts := h.sim.Stats()["PUT /v2/firewalls/{id}"]
	want := []string{"tcp:30081 " + all}
	for i := range 20 {
		h.createService(testService(fmt.Sprintf("burst-%d", i), corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, int32(31000+i))))
		want = append(want, fmt.Sprintf("tcp:%d %s", 31000+i, all))
	}
	h.waitForServices(22)
	h.waitForRules("the burst's NodePorts", firewallBatch, want...)
	if n := h.sim.Stats()["PUT /v2/firewalls/{id}"] - puts; n != 1 {
		t.Errorf("%d updates for a burst of 20 Services, want 1", n)
	}

	// Deleting Services closes their ports.
	for i := range 20 {
		if err := h.kube.CoreV1().Services("default").Delete(h.ctx, fmt.Sprintf("burst-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitForRules("the burst's NodePorts closed", firewallBatch, "tcp:30081 "+all)
	noDeletes(t, h.sim)
}

// TestFirewallRecreated: a firewall deleted out of band is created again,
// found missing by the resync, or by an update answered 404.
func TestFirewallRecreated(t *testing.T) {
	for _, tt := range []struct {
		name string
		poke bool // change a Service instead of waiting for a resync
	}{
		{name: "on resync"},
		{name: "on update", poke: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newFWHarness(t)
			svc := testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080))
			h.createService(svc)
			h.start(firewallOptions{})
			first := h.waitForRules("the firewall created", 0, "tcp:30080 "+all)
			if _, err := h.api.Firewalls.Delete(h.ctx, first.ID); err != nil {
				t.Fatal(err)
			}
			want, step := "tcp:30080 "+all, firewallResync
			if tt.poke {
				svc.Spec.Ports[0].NodePort = 30090
				h.updateService(svc)
				// Steps of the batch delay, far from the resync: the
				// update, answered 404, finds the firewall gone.
				want, step = "tcp:30090 "+all, firewallBatch
			}
			again := h.waitForRules("the firewall created again", step, want)
			if again.ID == first.ID {
				t.Errorf("the firewall kept ID %s", again.ID)
			}
			if tt.poke && h.clock.Since(h.epoch) >= firewallResync {
				t.Errorf("the firewall was recreated only after %s, by a resync", h.clock.Since(h.epoch))
			}
		})
	}
}

// TestFirewallAdopts: an existing firewall with the name is updated, not
// duplicated; of two, the first is managed and the other left alone, as
// is every other firewall.
func TestFirewallAdopts(t *testing.T) {
	h := newFWHarness(t)
	stale := &godo.FirewallRequest{
		Name: testFirewallName, Tags: []string{testWorkerTag},
		InboundRules: []godo.InboundRule{{Protocol: "tcp", PortRange: "22", Sources: &godo.Sources{Addresses: []string{"0.0.0.0/0"}}}},
	}
	var ids []string
	for _, name := range []string{"unrelated", testFirewallName, testFirewallName} {
		req := *stale
		req.Name = name
		fw, _, err := h.api.Firewalls.Create(h.ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fw.ID)
	}
	h.createService(testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080)))
	h.start(firewallOptions{})
	err := wait.PollUntilContextTimeout(h.ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		fws := h.sim.Firewalls()
		return len(fws) == 3 && fws[1].ID == ids[1] && cmp.Equal(simRules(fws[1]), []string{"tcp:30080 " + all}), nil
	})
	if err != nil {
		t.Fatalf("the first firewall named %s was not updated: %+v", testFirewallName, h.sim.Firewalls())
	}
	fws := h.sim.Firewalls()
	for _, i := range []int{0, 2} {
		if fws[i].ID != ids[i] || !cmp.Equal(simRules(fws[i]), []string{"tcp:22 0.0.0.0/0"}) {
			t.Errorf("firewall %s changed: %+v", ids[i], fws[i])
		}
	}
	if n := h.sim.Stats()["POST /v2/firewalls"]; n != 3 {
		t.Errorf("%d creates, want only the test's 3", n)
	}
	noDeletes(t, h.sim)
}

// TestFirewallRetries: API errors, on the list, the create and the
// update, are retried with backoff until they pass; nothing is deleted,
// no duplicate is created.
func TestFirewallRetries(t *testing.T) {
	h := newFWHarness(t)
	h.sim.Inject(dosim.Fault{Op: "GET /v2/firewalls", Status: http.StatusInternalServerError, Count: 2})
	h.sim.Inject(dosim.Fault{Op: "POST /v2/firewalls", Status: http.StatusServiceUnavailable, Count: 2})
	svc := testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080))
	h.createService(svc)
	h.start(firewallOptions{})
	// Each failure waits its backoff (1s, 2s, ...) on the fake clock.
	h.waitForRules("the firewall created despite errors", firewallMinRetry, "tcp:30080 "+all)

	h.sim.Inject(dosim.Fault{Op: "PUT /v2/firewalls/{id}", Status: http.StatusTooManyRequests, Count: 3})
	svc.Spec.Ports[0].NodePort = 30081
	h.updateService(svc)
	h.waitForRules("the update despite errors", firewallMinRetry, "tcp:30081 "+all)
	if n := h.sim.Stats()["PUT /v2/firewalls/{id}"]; n < 4 {
		t.Errorf("%d update attempts, want the 3 failed and 1 more", n)
	}
	noDeletes(t, h.sim)
}

func TestFirewallHalfConfigured(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"tags only": {"PUBLIC_ACCESS_FIREWALL_TAGS": testWorkerTag},
		"name only": {"PUBLIC_ACCESS_FIREWALL_NAME": testFirewallName},
	} {
		t.Run(name, func(t *testing.T) {
			sim := dosim.NewServer(t, dosim.Options{})
			env := sim.Env(sim.URL())
			maps.Copy(env, vars)
			_, err := framework.NewCloud(context.Background(), New(), &framework.Env{
				LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			})
			if err == nil || !strings.Contains(err.Error(), "PUBLIC_ACCESS_FIREWALL_NAME and PUBLIC_ACCESS_FIREWALL_TAGS") {
				t.Fatalf("NewCloud = %v, want an error naming both variables", err)
			}
		})
	}
}
