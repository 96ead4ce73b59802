package rancher_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

const lbStack = "kubernetes-loadbalancers"

// sharedName is the external service the load balancers share, named for
// the fixture's cluster (test-cluster).
const sharedName = "lb-nodes-test-cluster"

// lbFixture is the provider's load balancers on a simulated Cattle
// environment of two hosts, node-b and node-a (frameworktest.LBFixture),
// with the simulator, for what Cattle holds. afterWrite, when set, runs
// after each write the simulator answered.
type lbFixture struct {
	*frameworktest.LBFixture
	sim        *ranchersim.Server
	afterWrite func(r *http.Request)
}

// newLBFixture starts a simulator and the provider on it, with opts.
func newLBFixture(t *testing.T, opts frameworktest.LBOptions) *lbFixture {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	f := &lbFixture{sim: sim}
	// The simulator behind a handler that sees each write done.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sim.Handler().ServeHTTP(w, r)
		if r.Method != http.MethodGet && f.afterWrite != nil {
			f.afterWrite(r)
		}
	}))
	t.Cleanup(front.Close)
	target := target(sim)
	target.Env = sim.Env(front.URL)
	opts.Ports = []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
	}
	if opts.NewProvider == nil {
		opts.NewProvider = func() framework.Provider { return rancher.New() }
	}
	f.LBFixture = frameworktest.NewLBFixture(t, target, opts)
	for _, name := range []string{"node-b", "node-a"} {
		h := sim.AddHost(ranchersim.Host{Hostname: name})
		n := frameworktest.Node(name, "rancher://"+h.UUID)
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: h.AgentIPAddress}}
		f.Nodes = append(f.Nodes, n)
	}
	return f
}

// live are the simulator's services of kind not removed (nor being).
func live(sim *ranchersim.Server, kind string) []ranchersim.Service {
	return slices.DeleteFunc(sim.Services(), func(s ranchersim.Service) bool {
		return s.Kind != kind || s.Removed != nil || s.State == ranchersim.StateRemoving || s.State == ranchersim.StateRemoved
	})
}

func onlyService(t *testing.T, sim *ranchersim.Server, kind string) ranchersim.Service {
	t.Helper()
	svcs := live(sim, kind)
	if len(svcs) != 1 {
		t.Fatalf("Cattle holds %d live %ss, want 1: %+v", len(svcs), kind, svcs)
	}
	return svcs[0]
}

func endpointIPs(eps []ranchersim.Endpoint) []string {
	var ips []string
	for _, e := range eps {
		ips = append(ips, e.IPAddress)
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

func statusIPs(s *corev1.LoadBalancerStatus) []string {
	var ips []string
	for _, in := range s.Ingress {
		ips = append(ips, in.IP)
	}
	return ips
}

func nodeIPs(nodes []*corev1.Node) []string {
	var ips []string
	for _, n := range nodes {
		ips = append(ips, n.Status.Addresses[0].Address)
	}
	slices.Sort(ips)
	return ips
}

// TestLoadBalancerLifecycle creates a load balancer (stack, one external
// service, the load-balancer service with a TCP and a UDP port), syncs it
// again with nothing changed (no write), follows a node leaving (one PUT
// of the external service), changes a port (an in-place upgrade: same ID,
// same endpoints) and deletes what it made.
func TestLoadBalancerLifecycle(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	status, syncs := f.EnsureReadySyncs(t, svc)
	if syncs == 1 {
		t.Error("the first sync was ready: want the pending path while Cattle registers and activates")
	}

	stacks := slices.DeleteFunc(f.sim.State().Stacks, func(s ranchersim.Stack) bool { return s.Name != lbStack })
	if len(stacks) != 1 || stacks[0].ExternalID != lbStack+"://" {
		t.Fatalf("stacks named %s = %+v, want one with externalId %s://", lbStack, stacks, lbStack)
	}
	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	name := "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
	if lb.Name != name || lb.StackID != stacks[0].ID || lb.State != ranchersim.StateActive {
		t.Errorf("load balancer %s %q in %s, want active %q in the stack", lb.State, lb.Name, lb.StackID, name)
	}
	if ext.Name != sharedName || ext.StackID != stacks[0].ID || ext.HealthCheck != nil {
		t.Errorf("external service %q in %s (health check %+v), want %q in the stack without health check", ext.Name, ext.StackID, ext.HealthCheck, sharedName)
	}
	if diff := cmp.Diff(nodeIPs(f.Nodes), slices.Sorted(slices.Values(ext.ExternalIPAddresses))); diff != "" {
		t.Errorf("external service IPs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"53:53/udp", "80:80/tcp"}, slices.Sorted(slices.Values(lb.LaunchConfig.Ports))); diff != "" {
		t.Errorf("launchConfig.ports (-want +got):\n%s", diff)
	}
	if lb.LaunchConfig.ImageUUID != "docker:"+ranchersim.DefaultLBImage {
		t.Errorf("image %q, want the lb.instance.image setting's docker:%s", lb.LaunchConfig.ImageUUID, ranchersim.DefaultLBImage)
	}
	wantRules := []ranchersim.PortRule{
		{SourcePort: 53, TargetPort: 30053, Protocol: "udp", ServiceID: ext.ID},
		{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceID: ext.ID},
	}
	rules := slices.SortedFunc(slices.Values(lb.LBConfig.PortRules), func(a, b ranchersim.PortRule) int { return a.SourcePort - b.SourcePort })
	if diff := cmp.Diff(wantRules, rules, cmpPortRule); diff != "" {
		t.Errorf("port rules (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(lb.Links, func(l ranchersim.ServiceLink) bool { return l.ServiceID == ext.ID }) || len(lb.Links) != 1 {
		t.Errorf("service links %+v, want just the external service %s", lb.Links, ext.ID)
	}
	endpoints := endpointIPs(f.sim.Endpoints(lb.ID))
	if len(endpoints) == 0 || !slices.Equal(statusIPs(status), endpoints) {
		t.Errorf("status IPs %v, want the public endpoints' %v", statusIPs(status), endpoints)
	}
	if id := f.Fresh(t, svc).Annotations[rancher.AnnotationLoadBalancerID]; id != lb.ID {
		t.Errorf("ID annotation %q, want %s", id, lb.ID)
	}

	// Nothing changed: no write.
	before := f.sim.Writes()
	if _, syncs := f.EnsureReadySyncs(t, svc); syncs != 1 || f.sim.Writes() != before {
		t.Errorf("an idle sync retried %d times and made %d writes, want none", syncs-1, f.sim.Writes()-before)
	}

	// A node leaves: one PUT of the external service, the load balancer
	// untouched.
	f.Nodes = f.Nodes[:1]
	before = f.sim.Writes()
	if err := f.Update(t, svc); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	if w := f.sim.Writes() - before; w != 1 {
		t.Errorf("a node leaving made %d writes, want 1", w)
	}
	if got, _ := f.sim.Service(ext.ID); !slices.Equal(got.ExternalIPAddresses, nodeIPs(f.Nodes)) {
		t.Errorf("external service IPs %v, want %v", got.ExternalIPAddresses, nodeIPs(f.Nodes))
	}

	// A port changes: upgraded in place.
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081 })
	status = f.EnsureReady(t, svc)
	after := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if after.ID != lb.ID {
		t.Fatalf("after a port change the load balancer is %s, want the same %s", after.ID, lb.ID)
	}
	if diff := cmp.Diff([]string{"53:53/udp", "8080:8080/tcp"}, slices.Sorted(slices.Values(after.LaunchConfig.Ports))); diff != "" {
		t.Errorf("launchConfig.ports after the change (-want +got):\n%s", diff)
	}
	if after.Upgrade == nil || after.State != ranchersim.StateActive {
		t.Errorf("load balancer %s, upgrade %+v: want an in-service upgrade, finished", after.State, after.Upgrade)
	}
	if got := statusIPs(status); !slices.Equal(got, endpoints) {
		t.Errorf("status IPs after the port change %v, want the same endpoints %v", got, endpoints)
	}
	if onlyService(t, f.sim, ranchersim.KindExternal).ID != ext.ID {
		t.Error("the port change replaced the external service")
	}

	f.DeleteDone(t, svc)
	if n := len(live(f.sim, ranchersim.KindLoadBalancer)) + len(live(f.sim, ranchersim.KindExternal)); n != 0 {
		t.Errorf("after delete Cattle holds %d live services, want none: %+v", n, f.sim.Services())
	}
	f.DeleteDone(t, svc) // twice: already gone is done
}

var cmpPortRule = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Priority"
}, cmp.Ignore())

// TestLoadBalancerLocalHealthCheck: externalTrafficPolicy Local checks
// the nodes on the healthCheckNodePort; moving to Cluster replaces the
// external service (Cattle cannot change a health check in place) without
// the load balancer ever losing its backend.
func TestLoadBalancerLocalHealthCheck(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "local", nil, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	f.EnsureReady(t, svc)
	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	if hc := ext.HealthCheck; hc == nil || hc.Port != 32100 || !strings.Contains(hc.RequestLine, "/healthz") {
		t.Fatalf("health check %+v, want GET /healthz on 32100", hc)
	}
	lbID := onlyService(t, f.sim, ranchersim.KindLoadBalancer).ID
	f.afterWrite = func(*http.Request) { assertBackend(t, f.sim, lbID) }
	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		s.Spec.HealthCheckNodePort = 0
	})
	f.EnsureReady(t, svc)
	f.afterWrite = nil
	now := onlyService(t, f.sim, ranchersim.KindExternal)
	if now.HealthCheck != nil || now.ID == ext.ID {
		t.Errorf("external service %s with health check %+v, want a new one without", now.ID, now.HealthCheck)
	}
}

// TestLoadBalancerChangeCattleSettlesAtOnce: a change Cattle has finished
// by the time it is read back (a quick Cattle, or another sync's list
// read that settled it) is followed by the next in the same sync, so a
// sync reported ready has made the whole change. Before, the sync stopped
// after its first write and reported ready with the ports, the port rules
// or the backend left as they were, and nothing synced the Service again
// (the short soak's "listens on" violation). Here Cattle settles every
// change at once but the upgrade, and the Service changes again while
// Cattle upgrades its first change.
func TestLoadBalancerChangeCattleSettlesAtOnce(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "quick", nil)
	f.EnsureReady(t, svc)
	f.afterWrite = func(r *http.Request) {
		if r.URL.Query().Get("action") != "upgrade" {
			f.sim.Advance()
		}
	}

	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	for i := 0; onlyService(t, f.sim, ranchersim.KindLoadBalancer).State != ranchersim.StateUpgrading; i++ {
		if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) || i == 10 {
			t.Fatalf("sync %d after the change: %v, want retries until Cattle upgrades the ports", i, err)
		}
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[1].Port = 5353 })
	f.EnsureReady(t, svc)

	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	if lb.State != ranchersim.StateActive || ext.HealthCheck == nil || ext.HealthCheck.Port != 32100 {
		t.Errorf("load balancer %s, external service %s with health check %+v: want active, and one external service checking 32100", lb.State, ext.ID, ext.HealthCheck)
	}
	if diff := cmp.Diff([]string{"5353:5353/udp", "8080:8080/tcp"}, slices.Sorted(slices.Values(lb.LaunchConfig.Ports))); diff != "" {
		t.Errorf("launchConfig.ports (-want +got):\n%s", diff)
	}
	wantRules := []ranchersim.PortRule{
		{SourcePort: 5353, TargetPort: 30053, Protocol: "udp", ServiceID: ext.ID},
		{SourcePort: 8080, TargetPort: 30081, Protocol: "tcp", ServiceID: ext.ID},
	}
	rules := slices.SortedFunc(slices.Values(lb.LBConfig.PortRules), func(a, b ranchersim.PortRule) int { return a.SourcePort - b.SourcePort })
	if diff := cmp.Diff(wantRules, rules, cmpPortRule); diff != "" {
		t.Errorf("port rules (-want +got):\n%s", diff)
	}
	assertBackend(t, f.sim, lb.ID)
}

// assertBackend fails unless every port rule of the load balancer sends
// traffic to a live external service it links to, holding IPs.
func assertBackend(t *testing.T, sim *ranchersim.Server, lbID string) {
	t.Helper()
	lb, _ := sim.Service(lbID)
	if lb.LBConfig == nil || len(lb.LBConfig.PortRules) == 0 {
		t.Errorf("load balancer %s has no port rules", lbID)
		return
	}
	for _, r := range lb.LBConfig.PortRules {
		ext, ok := sim.Service(r.ServiceID)
		linked := slices.ContainsFunc(lb.Links, func(l ranchersim.ServiceLink) bool { return l.ServiceID == r.ServiceID })
		if !ok || ext.Removed != nil || ext.State == ranchersim.StateRemoving || !linked || len(ext.ExternalIPAddresses) == 0 {
			t.Errorf("load balancer %s: port %d goes to %s (%s, linked %v, IPs %v): no backend", lbID, r.SourcePort, r.ServiceID, ext.State, linked, ext.ExternalIPAddresses)
		}
	}
}

// TestLoadBalancerCrashSafe: a CCM that dies after creating the load
// balancer, before writing the ID annotation, leaves it to the next,
// which adopts it by name: no second load balancer.
func TestLoadBalancerCrashSafe(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	first := f.Start(t, func(env *framework.Env) { env.Client = nil }) // cannot write the annotation
	if _, err := first.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil {
		t.Fatal("the first sync was ready, want a retry while Cattle registers")
	}
	created := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	f.sim.Advance()
	f.LB = f.Start(t)
	f.EnsureReady(t, svc)
	if got := onlyService(t, f.sim, ranchersim.KindLoadBalancer); got.ID != created.ID {
		t.Errorf("the next CCM made load balancer %s, want %s adopted", got.ID, created.ID)
	}
	onlyService(t, f.sim, ranchersim.KindExternal)
	if id := f.Fresh(t, svc).Annotations[rancher.AnnotationLoadBalancerID]; id != created.ID {
		t.Errorf("ID annotation %q, want %s", id, created.ID)
	}
}

// TestLoadBalancerRejects: what a Cattle load balancer cannot do is a
// Warning Event naming the field, and nothing is written.
func TestLoadBalancerRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations map[string]string
		mutate      func(*corev1.Service)
		want        string
	}{
		"source ranges":    {mutate: func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }, want: "spec.loadBalancerSourceRanges"},
		"session affinity": {mutate: func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }, want: "spec.sessionAffinity"},
		"load-balancer IP": {mutate: func(s *corev1.Service) { s.Spec.LoadBalancerIP = "192.0.2.7" }, want: "spec.loadBalancerIP"},
		"SCTP":             {mutate: func(s *corev1.Service) { s.Spec.Ports[1].Protocol = corev1.ProtocolSCTP }, want: "spec.ports[1].protocol"},
		"no node port":     {mutate: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 0 }, want: "spec.ports[0].nodePort"},
		"bad annotation":   {annotations: map[string]string{rancher.AnnotationPrefix + "protocol": "quic"}, want: rancher.AnnotationPrefix + "protocol"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			mutate := tc.mutate
			if mutate == nil {
				mutate = func(*corev1.Service) {}
			}
			svc := f.Service(t, "web", tc.annotations, mutate)
			if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil {
				t.Fatal("EnsureLoadBalancer: no error")
			}
			if w := f.sim.Writes(); w != 0 {
				t.Errorf("%d writes, want none", w)
			}
			events := f.Drain()
			if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Warning") && strings.Contains(e, tc.want) }) {
				t.Errorf("events %q: want a Warning naming %s", events, tc.want)
			}
		})
	}
}

// TestLoadBalancerPortChangeBeforeActivation: Cattle offers the upgrade
// action only to an active service, so ports changed while the new load
// balancer is still inactive are upgraded once it is activated, not
// waited for for ever (the short soak's Service whose load balancer never
// converged, and whose replaced external service leaked).
func TestLoadBalancerPortChangeBeforeActivation(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "early", nil)
	if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("first sync: %v, want a retry while Cattle registers the load balancer", err)
	}
	f.sim.Advance()
	if lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer); lb.State != ranchersim.StateInactive {
		t.Fatalf("load balancer %s after one step, want inactive (created without startOnCreate)", lb.State)
	}

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081 })
	f.EnsureReady(t, svc)
	lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	if lb.State != ranchersim.StateActive {
		t.Errorf("load balancer %s, want active", lb.State)
	}
	if diff := cmp.Diff([]string{"53:53/udp", "8080:8080/tcp"}, slices.Sorted(slices.Values(lb.LaunchConfig.Ports))); diff != "" {
		t.Errorf("launchConfig.ports (-want +got):\n%s", diff)
	}
	if ext := live(f.sim, ranchersim.KindExternal); len(ext) != 1 {
		t.Errorf("live external services %+v, want just the load balancer's one", ext)
	}
}
