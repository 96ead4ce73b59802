package triton_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

const clusterName = "test"

// lbFixture is the provider's load balancers on a simulated Triton
// (frameworktest.LBFixture) with two running machines, node-b and node-a,
// and the simulator, for what the cloud holds.
type lbFixture struct {
	*frameworktest.LBFixture
	sim *tritonsim.Server
}

// newLBFixture starts a simulator and the provider on it, with extra
// environment variables (TRITON_LB_MODE, say).
func newLBFixture(t *testing.T, opts tritonsim.Options, extra map[string]string) *lbFixture {
	t.Helper()
	sim := tritonsim.NewServer(t, opts)
	return &lbFixture{frameworktest.NewLBFixture(t, target(sim), frameworktest.LBOptions{
		Env:         extra,
		ClusterName: clusterName,
		Nodes:       []string{"node-b", "node-a"},
		Ports: []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
			{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
		},
		UID:         func(name string) types.UID { return types.UID("0f1e2d3c-" + name) },
		NewProvider: func() framework.Provider { return triton.New() },
	}), sim}
}

// provider is the started provider, for its controllers.
func (f *lbFixture) provider() *triton.Provider { return f.Cloud.Provider().(*triton.Provider) }

// appliances are the machines tagged as a Service's appliance, deleted
// ones left out.
func (f *lbFixture) appliances() []tritonsim.Machine {
	return slices.DeleteFunc(f.sim.Machines(), func(m tritonsim.Machine) bool {
		_, ok := m.Tags["k8s-service-uid"]
		return !ok || m.State == tritonsim.StateDeleted
	})
}

// services is a machine's triton.cns.services tag.
func (f *lbFixture) services(t *testing.T, node *corev1.Node) string {
	t.Helper()
	m, ok := f.sim.Machine(strings.TrimPrefix(node.Spec.ProviderID, "triton://"))
	if !ok {
		t.Fatalf("no machine for node %s", node.Name)
	}
	s, _ := m.Tags["triton.cns.services"].(string)
	return s
}

func machineID(n *corev1.Node) string { return strings.TrimPrefix(n.Spec.ProviderID, "triton://") }

func TestMoiraiLoadBalancer(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.Service(t, "web", nil)

	_, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes)
	if !frameworktest.IsRetry(err) {
		t.Fatalf("first sync: %v, want a retry while the appliance provisions", err)
	}
	status := f.EnsureReady(t, svc)
	apps := f.appliances()
	if len(apps) != 1 {
		t.Fatalf("%d appliances, want 1", len(apps))
	}
	m := apps[0]
	if got := f.Fresh(t, svc).Annotations[triton.AnnotationLoadBalancerID]; got != m.ID {
		t.Errorf("ID annotation %q, want %q", got, m.ID)
	}
	label := "k8s-test-default-web"
	if m.Tags["triton.cns.services"] != label || m.Tags["k8s-cluster"] != clusterName || !m.FirewallEnabled {
		t.Errorf("appliance tags %v, firewall %v", m.Tags, m.FirewallEnabled)
	}
	if len(status.Ingress) != 1 || status.Ingress[0].IP == "" || !strings.HasPrefix(status.Ingress[0].Hostname, label+".svc.") || !strings.HasSuffix(status.Ingress[0].Hostname, ".us-east-1.triton.zone") {
		t.Fatalf("status %+v, want the appliance's IP and its CNS name", status.Ingress)
	}
	if got := f.sim.Resolve(status.Ingress[0].Hostname); !slices.Contains(got, status.Ingress[0].IP) {
		t.Errorf("%s resolves to %v, want the appliance's %s", status.Ingress[0].Hostname, got, status.Ingress[0].IP)
	}
	acct := strings.Split(status.Ingress[0].Hostname, ".")[2]
	backend := "k8s-test-nodes.svc." + acct + ".us-east-1.cns.joyent.com"
	want := map[string]string{
		"cloud.tritoncompute:loadbalancer": "true",
		"cloud.tritoncompute:portmap":      "tcp://80:" + backend + ":30080{check:/healthz,port:10256},tcp://443:" + backend + ":30443{check:/healthz,port:10256}",
		"cloud.tritoncompute:max_rs":       "32",
	}
	if diff := cmp.Diff(want, m.Metadata); diff != "" {
		t.Errorf("appliance metadata (-want +got):\n%s", diff)
	}
	for _, n := range f.Nodes {
		if got := f.services(t, n); got != "k8s-test-nodes" {
			t.Errorf("node %s services %q, want the node service", n.Name, got)
		}
	}
	// The appliance reaches exactly the nodes by the private name.
	if got, want := f.sim.ResolveCNS(backend).Machines, []string{machineID(f.Nodes[0]), machineID(f.Nodes[1])}; !sameSet(got, want) {
		t.Errorf("%s resolves to machines %v, want %v", backend, got, want)
	}
	if rules := f.sim.FirewallRules(); len(rules) != 1 || rules[0].Rule != "FROM any TO vm "+m.ID+" ALLOW tcp (PORT 80 AND PORT 443)" {
		t.Errorf("firewall rules %+v, want the Service ports open to any", rules)
	}

	// Nothing changed: no call at all, the appliance, the nodes' tags and
	// the firewall rules being in the shared lists.
	before := calls(f.sim)
	if _, err := f.Ensure(t, svc); err != nil {
		t.Fatal(err)
	}
	if got := calls(f.sim); got != before {
		t.Errorf("a sync with nothing changed made %d calls", got-before)
	}

	// A port changes: the metadata is rewritten, on the same appliance.
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 31080 })
	f.EnsureReady(t, svc)
	after, _ := f.sim.Machine(m.ID)
	if !strings.Contains(after.Metadata["cloud.tritoncompute:portmap"], "tcp://80:"+backend+":31080{") || len(f.appliances()) != 1 {
		t.Errorf("portmap %q after the port change", after.Metadata["cloud.tritoncompute:portmap"])
	}

	// Delete: no appliance, no rule, and the nodes leave the node service.
	if err := f.Delete(t, svc); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if apps := f.appliances(); len(apps) != 0 {
		t.Errorf("appliances left: %+v", apps)
	}
	if rules := f.sim.FirewallRules(); len(rules) != 0 {
		t.Errorf("firewall rules left: %+v", rules)
	}
	for _, n := range f.Nodes {
		if got := f.services(t, n); got != "" {
			t.Errorf("node %s still in services %q", n.Name, got)
		}
	}
	if err := f.Delete(t, svc); err != nil {
		t.Errorf("deleting again: %v", err)
	}
}

// TestMoiraiRulesSweptOnceTheirApplianceIsGone: an appliance deleted by
// hand leaves its firewall rules behind. A delete sweeps them once the
// shared lists show the appliance gone: at once when every sync reads the
// cloud, within the lists' TTL otherwise, and at the latest with the
// cluster's last appliance, whose delete reads both lists afresh; a live
// appliance's rules stay.
func TestMoiraiRulesSweptOnceTheirApplianceIsGone(t *testing.T) {
	for _, c := range []struct {
		name string
		ttl  time.Duration
	}{{"fresh lists", -1}, {"shared lists", 0}} {
		t.Run(c.name, func(t *testing.T) {
			sim := tritonsim.NewServer(t, tritonsim.Options{})
			f := &lbFixture{frameworktest.NewLBFixture(t, target(sim), frameworktest.LBOptions{
				ClusterName: clusterName, Nodes: []string{"node-b", "node-a"}, CacheTTL: c.ttl,
				Ports:       []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}},
				UID:         func(name string) types.UID { return types.UID("0f1e2d3c-" + name) },
				NewProvider: func() framework.Provider { return triton.New() },
			}), sim}
			byHand, deleted, kept := f.Service(t, "a", nil), f.Service(t, "b", nil), f.Service(t, "c", nil)
			for _, svc := range []*corev1.Service{byHand, deleted, kept} {
				f.EnsureReady(t, svc)
			}
			keptID := f.Fresh(t, kept).Annotations[triton.AnnotationLoadBalancerID]
			f.sim.DeleteMachine(f.Fresh(t, byHand).Annotations[triton.AnnotationLoadBalancerID])
			if err := f.Delete(t, deleted); err != nil {
				t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
			}
			rules := f.sim.FirewallRules()
			if !slices.ContainsFunc(rules, func(r tritonsim.FirewallRule) bool { return strings.Contains(r.Rule, "TO vm "+keptID+" ") }) {
				t.Errorf("firewall rules %+v: the live appliance's (%s) went", rules, keptID)
			}
			if c.ttl < 0 && len(rules) != 1 {
				t.Errorf("firewall rules %+v, want only those of the appliance left (%s)", rules, keptID)
			}
			if err := f.Delete(t, kept); err != nil {
				t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
			}
			if rules := f.sim.FirewallRules(); len(rules) != 0 {
				t.Errorf("firewall rules after the last appliance: %+v", rules)
			}
		})
	}
}

// TestMoiraiDeleteListsNoMachines: deleting one appliance of several
// reads the shared list and GETs one other appliance, never a list of the
// cluster's machines (every node: at 5,000 nodes, a delete was 6 pages);
// the others keep their rules and the nodes their node service.
func TestMoiraiDeleteListsNoMachines(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svcs := []*corev1.Service{f.Service(t, "a", nil), f.Service(t, "b", nil), f.Service(t, "c", nil)}
	for _, svc := range svcs {
		f.EnsureReady(t, svc)
	}
	const list = "GET /{account}/machines"
	before := f.sim.Stats()[list]
	if err := f.Delete(t, svcs[1]); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if n := f.sim.Stats()[list] - before; n != 0 {
		t.Errorf("deleting one appliance of three listed machines %d times", n)
	}
	if apps, rules := f.appliances(), f.sim.FirewallRules(); len(apps) != 2 || len(rules) != 2 {
		t.Errorf("after the delete: %d appliances, firewall rules %+v; want 2 of each", len(apps), rules)
	}
	for _, n := range f.Nodes {
		if got := f.services(t, n); got == "" {
			t.Errorf("node %s left the node service with two appliances left", n.Name)
		}
	}
}

// TestMoiraiFoundAfterCrash: a CCM that died after creating the appliance,
// before recording its ID, finds it by its k8s-service-uid tag.
func TestMoiraiFoundAfterCrash(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.Service(t, "web", nil)
	if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); !frameworktest.IsRetry(err) {
		t.Fatalf("first sync: %v", err)
	}
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, triton.AnnotationLoadBalancerID) })
	f.EnsureReady(t, svc)
	if apps := f.appliances(); len(apps) != 1 {
		t.Errorf("%d appliances after the lost ID, want 1", len(apps))
	}
}

// TestMoiraiImageReplaced: the operator imports a newer appliance image
// and deletes the one the first appliance was made of. The next create
// fails once on the deleted image; the one after looks the image up
// again and uses the newer one, without a restart.
func TestMoiraiImageReplaced(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	f.EnsureReady(t, f.Service(t, "first", nil))
	old := f.appliances()[0].Image
	newer := f.sim.AddImage(tritonsim.Image{Name: tritonsim.LoadBalancerImage, Version: "20261101T000000Z",
		OS: "smartos", Type: "zone-dataset", PublishedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	f.sim.DeleteImage(old)

	svc := f.Service(t, "second", nil)
	if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil || frameworktest.IsRetry(err) {
		t.Fatalf("create from a deleted image: %v, want its error", err)
	}
	f.EnsureReady(t, svc)
	id := f.Fresh(t, svc).Annotations[triton.AnnotationLoadBalancerID]
	if m, _ := f.sim.Machine(id); m.Image != newer.ID {
		t.Errorf("second appliance made of image %s, want the newer %s", m.Image, newer.ID)
	}
}

func TestMoiraiSourceRangesAndAnnotations(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.Service(t, "web", map[string]string{
		triton.AnnotationPrefix + "listener-type":    "tcp-proxy-v2",
		triton.AnnotationPrefix + "certificate-name": "www.example.com,example.com",
		triton.AnnotationPrefix + "timeout-client":   "90s",
		triton.AnnotationPrefix + "metrics-acl":      "10.0.0.0/8",
	}, func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24", "198.51.100.0/24"}
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	})
	status := f.EnsureReady(t, svc)
	if len(status.Ingress) != 1 || status.Ingress[0].IPMode == nil || *status.Ingress[0].IPMode != corev1.LoadBalancerIPModeProxy {
		t.Errorf("status %+v, want ipMode Proxy", status.Ingress)
	}
	m := f.appliances()[0]
	for key, want := range map[string]string{
		"cloud.tritoncompute:certificate_name": "www.example.com,example.com",
		"cloud.tritoncompute:timeouts":         "{client:90000ms}",
		"cloud.tritoncompute:metrics_acl":      "10.0.0.0/8",
	} {
		if m.Metadata[key] != want {
			t.Errorf("metadata %s = %q, want %q", key, m.Metadata[key], want)
		}
	}
	if pm := m.Metadata["cloud.tritoncompute:portmap"]; !strings.HasPrefix(pm, "tcp-proxy-v2://80:") || !strings.Contains(pm, "{check:/healthz,port:32000}") {
		t.Errorf("portmap %q, want tcp-proxy-v2 checked on the healthCheckNodePort", pm)
	}
	var rules []string
	for _, r := range f.sim.FirewallRules() {
		rules = append(rules, r.Rule)
	}
	want := []string{
		"FROM (subnet 198.51.100.0/24 OR subnet 203.0.113.0/24) TO vm " + m.ID + " ALLOW tcp (PORT 80 AND PORT 443)",
		"FROM subnet 10.0.0.0/8 TO vm " + m.ID + " ALLOW tcp PORT 8405",
	}
	if !sameSet(rules, want) {
		t.Errorf("firewall rules %q, want %q", rules, want)
	}

	// The ranges change: the rule is replaced; nothing else is written.
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"} })
	f.EnsureReady(t, svc)
	rules = nil
	for _, r := range f.sim.FirewallRules() {
		rules = append(rules, r.Rule)
	}
	want[0] = "FROM subnet 192.0.2.0/24 TO vm " + m.ID + " ALLOW tcp (PORT 80 AND PORT 443)"
	if !sameSet(rules, want) {
		t.Errorf("firewall rules %q after the change, want %q", rules, want)
	}
}

// TestInvalidServiceNoWrite: what Triton cannot serve is a Warning Event
// and no write.
func TestInvalidServiceNoWrite(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	cases := map[string]*corev1.Service{
		"udp": f.Service(t, "udp", nil, func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
		"affinity": f.Service(t, "sticky", nil, func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}),
		"annotation": f.Service(t, "bad", map[string]string{triton.AnnotationPrefix + "listener-type": "udp"}),
		"cns ranges": f.Service(t, "ranges", map[string]string{triton.AnnotationPrefix + "mode": "cns"}, func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
		}),
	}
	before := f.sim.Writes()
	for name, svc := range cases {
		if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil || frameworktest.IsRetry(err) {
			t.Errorf("%s: EnsureLoadBalancer = %v, want an error", name, err)
		}
	}
	if got := f.sim.Writes(); got != before {
		t.Errorf("invalid Services made %d writes", got-before)
	}
	warnings := 0
	for _, e := range f.Drain() {
		if strings.HasPrefix(e, "Warning ") {
			warnings++
		}
	}
	if warnings != len(cases) {
		t.Errorf("%d Warning Events, want %d", warnings, len(cases))
	}
}

// calls is how many calls the simulator has served.
func calls(sim *tritonsim.Server) int {
	n := 0
	for _, c := range sim.Stats() {
		n += c
	}
	return n
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
