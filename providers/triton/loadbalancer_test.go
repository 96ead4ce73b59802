package triton_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

const clusterName = "test"

// lbFixture is the provider on a simulator, with a fake API server for the
// Services (the pipeline writes the ID annotation there) and an event
// recorder; nodes are two running machines.
type lbFixture struct {
	ctx      context.Context
	sim      *tritonsim.Server
	kube     *fake.Clientset
	events   *record.FakeRecorder
	provider *triton.Provider
	env      *framework.Env
	lb       cloudprovider.LoadBalancer
	nodes    []*corev1.Node
}

// newLBFixture starts a simulator and the provider on it, with extra
// environment variables (TRITON_LB_MODE, say).
func newLBFixture(t *testing.T, opts tritonsim.Options, extra map[string]string) *lbFixture {
	t.Helper()
	sim := tritonsim.NewServer(t, opts)
	f := &lbFixture{sim: sim, kube: fake.NewClientset(), events: record.NewFakeRecorder(100)}
	for _, name := range []string{"node-b", "node-a"} {
		id := sim.Cloud().AddInstance(name)
		f.nodes = append(f.nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: "triton://" + id}})
	}
	cloud, err := startProvider(t, sim, extra, func(e *framework.Env) { e.Client, e.Recorder = f.kube, f.events })
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	f.provider, f.env, f.ctx = cloud.provider, cloud.env, cloud.ctx
	f.lb, _ = cloud.LoadBalancer()
	return f
}

// started is the provider started on a simulator.
type started struct {
	*framework.Cloud
	provider *triton.Provider
	env      *framework.Env
	ctx      context.Context
}

// startProvider starts the provider on sim, with extra environment
// variables.
func startProvider(t *testing.T, sim *tritonsim.Server, extra map[string]string, mutate ...func(*framework.Env)) (*started, error) {
	t.Helper()
	env := sim.Env(sim.URL())
	maps.Copy(env, extra)
	_, ctx := ktesting.NewTestContext(t)
	s := &started{provider: triton.New(), ctx: ctx, env: &framework.Env{
		ClusterName: clusterName,
		LookupEnv:   func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CloudAPI:    cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	}}
	for _, m := range mutate {
		m(s.env)
	}
	cloud, err := framework.NewCloud(ctx, s.provider, s.env)
	s.Cloud = cloud
	return s, err
}

// service stores a LoadBalancer Service with two ports.
func (f *lbFixture) service(t *testing.T, name string, annotations map[string]string, mutate ...func(*corev1.Service)) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("0f1e2d3c-" + name), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	created, err := f.kube.CoreV1().Services("default").Create(f.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func (f *lbFixture) fresh(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := f.kube.CoreV1().Services(svc.Namespace).Get(f.ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (f *lbFixture) update(t *testing.T, svc *corev1.Service, mutate func(*corev1.Service)) *corev1.Service {
	t.Helper()
	s := f.fresh(t, svc)
	mutate(s)
	got, err := f.kube.CoreV1().Services(s.Namespace).Update(f.ctx, s, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ensureReady syncs the Service as the service controller does until the
// load balancer is ready; each RetryError is one more sync, after the
// simulated cloud moves on.
func (f *lbFixture) ensureReady(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) *corev1.LoadBalancerStatus {
	t.Helper()
	for range 6 {
		status, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, f.fresh(t, svc), nodes)
		if !isRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancer: %v", err)
			}
			return status
		}
		f.sim.Advance()
	}
	t.Fatal("EnsureLoadBalancer: not ready after 6 syncs")
	return nil
}

func isRetry(err error) bool {
	var retry *api.RetryError
	return errors.As(err, &retry)
}

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

// events drains the recorded events.
func (f *lbFixture) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestMoiraiLoadBalancer(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.service(t, "web", nil)

	_, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.nodes)
	if !isRetry(err) {
		t.Fatalf("first sync: %v, want a retry while the appliance provisions", err)
	}
	status := f.ensureReady(t, svc, f.nodes)
	apps := f.appliances()
	if len(apps) != 1 {
		t.Fatalf("%d appliances, want 1", len(apps))
	}
	m := apps[0]
	if got := f.fresh(t, svc).Annotations[triton.AnnotationLoadBalancerID]; got != m.ID {
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
	for _, n := range f.nodes {
		if got := f.services(t, n); got != "k8s-test-nodes" {
			t.Errorf("node %s services %q, want the node service", n.Name, got)
		}
	}
	// The appliance reaches exactly the nodes by the private name.
	if got, want := f.sim.ResolveCNS(backend).Machines, []string{machineID(f.nodes[0]), machineID(f.nodes[1])}; !sameSet(got, want) {
		t.Errorf("%s resolves to machines %v, want %v", backend, got, want)
	}
	if rules := f.sim.FirewallRules(); len(rules) != 1 || rules[0].Rule != "FROM any TO vm "+m.ID+" ALLOW tcp (PORT 80 AND PORT 443)" {
		t.Errorf("firewall rules %+v, want the Service ports open to any", rules)
	}

	// Nothing changed: no call at all, the appliance, the nodes' tags and
	// the firewall rules being in the shared lists.
	before := calls(f.sim)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, f.fresh(t, svc), f.nodes); err != nil {
		t.Fatal(err)
	}
	if got := calls(f.sim); got != before {
		t.Errorf("a sync with nothing changed made %d calls", got-before)
	}

	// A port changes: the metadata is rewritten, on the same appliance.
	svc = f.update(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 31080 })
	f.ensureReady(t, svc, f.nodes)
	after, _ := f.sim.Machine(m.ID)
	if !strings.Contains(after.Metadata["cloud.tritoncompute:portmap"], "tcp://80:"+backend+":31080{") || len(f.appliances()) != 1 {
		t.Errorf("portmap %q after the port change", after.Metadata["cloud.tritoncompute:portmap"])
	}

	// Delete: no appliance, no rule, and the nodes leave the node service.
	if err := f.lb.EnsureLoadBalancerDeleted(f.ctx, clusterName, f.fresh(t, svc)); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if apps := f.appliances(); len(apps) != 0 {
		t.Errorf("appliances left: %+v", apps)
	}
	if rules := f.sim.FirewallRules(); len(rules) != 0 {
		t.Errorf("firewall rules left: %+v", rules)
	}
	for _, n := range f.nodes {
		if got := f.services(t, n); got != "" {
			t.Errorf("node %s still in services %q", n.Name, got)
		}
	}
	if err := f.lb.EnsureLoadBalancerDeleted(f.ctx, clusterName, f.fresh(t, svc)); err != nil {
		t.Errorf("deleting again: %v", err)
	}
}

// TestMoiraiRulesSweptOnceTheirApplianceIsGone: an appliance deleted by
// hand leaves its firewall rules behind; the next appliance deleted takes
// them with it, and leaves a live appliance's alone.
func TestMoiraiRulesSweptOnceTheirApplianceIsGone(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	byHand, deleted, kept := f.service(t, "a", nil), f.service(t, "b", nil), f.service(t, "c", nil)
	for _, svc := range []*corev1.Service{byHand, deleted, kept} {
		f.ensureReady(t, svc, f.nodes)
	}
	keptID := f.fresh(t, kept).Annotations[triton.AnnotationLoadBalancerID]
	f.sim.DeleteMachine(f.fresh(t, byHand).Annotations[triton.AnnotationLoadBalancerID])
	if err := f.lb.EnsureLoadBalancerDeleted(f.ctx, clusterName, f.fresh(t, deleted)); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	rules := f.sim.FirewallRules()
	if len(rules) != 1 || !strings.Contains(rules[0].Rule, "TO vm "+keptID+" ") {
		t.Errorf("firewall rules %+v, want only those of the appliance left (%s)", rules, keptID)
	}
}

// TestMoiraiFoundAfterCrash: a CCM that died after creating the appliance,
// before recording its ID, finds it by its k8s-service-uid tag.
func TestMoiraiFoundAfterCrash(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.service(t, "web", nil)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.nodes); !isRetry(err) {
		t.Fatalf("first sync: %v", err)
	}
	svc = f.update(t, svc, func(s *corev1.Service) { delete(s.Annotations, triton.AnnotationLoadBalancerID) })
	f.ensureReady(t, svc, f.nodes)
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
	f.ensureReady(t, f.service(t, "first", nil), f.nodes)
	old := f.appliances()[0].Image
	newer := f.sim.AddImage(tritonsim.Image{Name: tritonsim.LoadBalancerImage, Version: "20261101T000000Z",
		OS: "smartos", Type: "zone-dataset", PublishedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	f.sim.DeleteImage(old)

	svc := f.service(t, "second", nil)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.nodes); err == nil || isRetry(err) {
		t.Fatalf("create from a deleted image: %v, want its error", err)
	}
	f.ensureReady(t, svc, f.nodes)
	id := f.fresh(t, svc).Annotations[triton.AnnotationLoadBalancerID]
	if m, _ := f.sim.Machine(id); m.Image != newer.ID {
		t.Errorf("second appliance made of image %s, want the newer %s", m.Image, newer.ID)
	}
}

func TestMoiraiSourceRangesAndAnnotations(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	svc := f.service(t, "web", map[string]string{
		triton.AnnotationPrefix + "listener-type":    "tcp-proxy-v2",
		triton.AnnotationPrefix + "certificate-name": "www.example.com,example.com",
		triton.AnnotationPrefix + "timeout-client":   "90s",
		triton.AnnotationPrefix + "metrics-acl":      "10.0.0.0/8",
	}, func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24", "198.51.100.0/24"}
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	})
	status := f.ensureReady(t, svc, f.nodes)
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
	svc = f.update(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"} })
	f.ensureReady(t, svc, f.nodes)
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
		"udp": f.service(t, "udp", nil, func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
		"affinity": f.service(t, "sticky", nil, func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}),
		"annotation": f.service(t, "bad", map[string]string{triton.AnnotationPrefix + "listener-type": "udp"}),
		"cns ranges": f.service(t, "ranges", map[string]string{triton.AnnotationPrefix + "mode": "cns"}, func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
		}),
	}
	before := f.sim.Writes()
	for name, svc := range cases {
		if _, err := f.lb.EnsureLoadBalancer(f.ctx, clusterName, svc, f.nodes); err == nil || isRetry(err) {
			t.Errorf("%s: EnsureLoadBalancer = %v, want an error", name, err)
		}
	}
	if got := f.sim.Writes(); got != before {
		t.Errorf("invalid Services made %d writes", got-before)
	}
	warnings := 0
	for _, e := range f.drainEvents() {
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
