package triton_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

func TestCNSLoadBalancer(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, map[string]string{"TRITON_LB_MODE": "cns"})
	// The user's own service on a node survives every edit.
	a, b := f.Nodes[1], f.Nodes[0]
	userTags(t, f, a, "web:8080")
	svc := f.Service(t, "api", nil)

	status := f.EnsureReady(t, svc)
	if len(status.Ingress) != 1 || status.Ingress[0].IP != "" || !strings.HasPrefix(status.Ingress[0].Hostname, "k8s-test-default-api.svc.") {
		t.Fatalf("status %+v, want the CNS hostname alone", status.Ingress)
	}
	host := status.Ingress[0].Hostname
	if got := f.Fresh(t, svc).Annotations[triton.AnnotationLoadBalancerID]; got != "cns:k8s-test-default-api" {
		t.Errorf("ID annotation %q", got)
	}
	if got := f.services(t, a); got != "web:8080,k8s-test-default-api:30080,k8s-test-default-api:30443" {
		t.Errorf("node a services %q", got)
	}
	if got := f.services(t, b); got != "k8s-test-default-api:30080,k8s-test-default-api:30443" {
		t.Errorf("node b services %q", got)
	}
	if got := f.sim.ResolveCNS(host).Machines; !sameSet(got, []string{machineID(a), machineID(b)}) {
		t.Errorf("%s resolves to machines %v, want both nodes", host, got)
	}
	var srvPorts []int
	for _, srv := range f.sim.ResolveCNS(host).SRV {
		srvPorts = append(srvPorts, srv.Port)
	}
	if !slices.Contains(srvPorts, 30080) || !slices.Contains(srvPorts, 30443) {
		t.Errorf("%s SRV ports %v, want the node ports", host, srvPorts)
	}
	ports := false
	for _, e := range f.Drain() {
		ports = ports || strings.HasPrefix(e, "Normal "+triton.EventCNSPorts) && strings.Contains(e, "30080, 30443")
	}
	if !ports {
		t.Error("no Normal Event naming the node ports")
	}

	// Nothing changed: no write.
	before := f.sim.Writes()
	if _, err := f.Ensure(t, svc); err != nil {
		t.Fatal(err)
	}
	if got := f.sim.Writes(); got != before {
		t.Errorf("a sync with nothing changed made %d writes", got-before)
	}

	// A stopped node leaves the name, as CNS does for machines not running.
	f.sim.SetMachineState(machineID(b), tritonsim.StateStopped)
	if got := f.sim.ResolveCNS(host).Machines; !sameSet(got, []string{machineID(a)}) {
		t.Errorf("with node b stopped %s resolves to %v", host, got)
	}
	f.sim.SetMachineState(machineID(b), tritonsim.StateRunning)

	// Node a leaves the Service: its entries go, the user's stays.
	if err := f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), []*corev1.Node{b}); err != nil {
		t.Fatal(err)
	}
	if got := f.services(t, a); got != "web:8080" {
		t.Errorf("node a services %q after it left, want the user's alone", got)
	}
	if got := f.sim.ResolveCNS(host).Machines; !sameSet(got, []string{machineID(b)}) {
		t.Errorf("%s resolves to %v after node a left", host, got)
	}

	// Delete: no entry left anywhere, the user's kept.
	if err := f.Delete(t, svc); err != nil {
		t.Fatal(err)
	}
	if got := f.services(t, a); got != "web:8080" {
		t.Errorf("node a services %q after delete", got)
	}
	if got := f.services(t, b); got != "" {
		t.Errorf("node b services %q after delete", got)
	}
	if got := f.sim.Resolve(host); len(got) != 0 {
		t.Errorf("%s still resolves to %v", host, got)
	}
}

// TestCNSModeAnnotationBesideMoirai: a Service asks for CNS in a Moirai
// cluster, and two Services share a node without losing each other's
// entries.
func TestCNSModeAnnotationBesideMoirai(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, nil)
	cns := f.Service(t, "dns", map[string]string{triton.AnnotationPrefix + "mode": "cns"})
	web := f.Service(t, "web", nil)
	f.EnsureReady(t, cns)
	f.EnsureReady(t, web)
	for _, n := range f.Nodes {
		if got := f.services(t, n); got != "k8s-test-default-dns:30080,k8s-test-default-dns:30443,k8s-test-nodes" {
			t.Errorf("node %s services %q", n.Name, got)
		}
	}
	if n := len(f.appliances()); n != 1 {
		t.Errorf("%d appliances, want the Moirai Service's alone", n)
	}

	// The CNS Service switches to Moirai: its entries go, an appliance comes.
	cns = f.UpdateService(t, cns, func(s *corev1.Service) { s.Annotations[triton.AnnotationPrefix+"mode"] = "moirai" })
	f.EnsureReady(t, cns)
	f.EnsureReady(t, cns)
	for _, n := range f.Nodes {
		if got := f.services(t, n); got != "k8s-test-nodes" {
			t.Errorf("node %s services %q after the switch", n.Name, got)
		}
	}
	if n := len(f.appliances()); n != 2 {
		t.Errorf("%d appliances after the switch, want 2", n)
	}
	if got := f.Fresh(t, cns).Annotations[triton.AnnotationLoadBalancerID]; strings.HasPrefix(got, "cns:") {
		t.Errorf("ID annotation %q after the switch", got)
	}
}

func TestCNSDisabledFailsStartup(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{CNSDisabled: true})
	err := startProvider(t, sim, nil)
	if err == nil || !strings.Contains(err.Error(), "triton_cns_enabled") {
		t.Errorf("start-up without CNS: %v, want an error naming triton_cns_enabled", err)
	}
}

func TestAutoModeWithoutImage(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{NoLoadBalancerImage: true}, nil)
	svc := f.Service(t, "web", nil)
	status := f.EnsureReady(t, svc)
	if len(status.Ingress) != 1 || status.Ingress[0].Hostname == "" || len(f.appliances()) != 0 {
		t.Errorf("status %+v, appliances %d: want CNS mode", status.Ingress, len(f.appliances()))
	}
	sim := tritonsim.NewServer(t, tritonsim.Options{NoLoadBalancerImage: true})
	if err := startProvider(t, sim, map[string]string{"TRITON_LB_MODE": "moirai"}); err == nil || !strings.Contains(err.Error(), "cloud-load-balancer") {
		t.Errorf("moirai without the image: %v, want an error naming the image", err)
	}
}

// userTags sets a node's triton.cns.services as its user would.
func userTags(t *testing.T, f *lbFixture, n *corev1.Node, services string) {
	t.Helper()
	f.sim.SetTags(machineID(n), map[string]any{"triton.cns.services": services})
}

// TestCNSFoundWithoutID: a restarted CCM finds a CNS load balancer whose
// Service lost its ID annotation by the entries on its nodes, so deleting
// the Service removes them.
func TestCNSFoundWithoutID(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, map[string]string{"TRITON_LB_MODE": "cns"})
	svc := f.Service(t, "api", nil)
	f.EnsureReady(t, svc)
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, triton.AnnotationLoadBalancerID) })

	lb := f.Start(t)
	if status, exists, err := lb.GetLoadBalancer(f.Ctx, clusterName, svc); !exists || err != nil || len(status.Ingress) != 1 {
		t.Fatalf("GetLoadBalancer = %+v, %v, %v; want the CNS name", status, exists, err)
	}
	if err := lb.EnsureLoadBalancerDeleted(f.Ctx, clusterName, svc); err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if got := f.services(t, n); got != "" {
			t.Errorf("node %s services %q after delete, want none", n.Name, got)
		}
	}
}

// An entry the user adds to a node after the CCM listed the cluster's
// machines (within the list's TTL) survives the CCM's next edit of that
// node: the edit reads the tag afresh before it writes.
func TestCNSKeepsEntryAddedSinceTheList(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, map[string]string{"TRITON_LB_MODE": "cns"})
	a := f.Nodes[0]
	svc := f.Service(t, "api", nil)
	f.EnsureReady(t, svc)

	userTags(t, f, a, f.services(t, a)+",web:8080")
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 31080 })
	if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err != nil {
		t.Fatal(err)
	}
	if got := f.services(t, a); !strings.Contains(got, "web:8080") || !strings.Contains(got, "k8s-test-default-api:31080") {
		t.Errorf("node a services %q, want the user's web:8080 kept beside the new node port", got)
	}
}

// startProvider starts the provider on sim, with extra environment
// variables, as a CCM starts.
func startProvider(t *testing.T, sim *tritonsim.Server, extra map[string]string) error {
	t.Helper()
	env := sim.Env(sim.URL())
	maps.Copy(env, extra)
	_, err := framework.NewCloud(ctx(t), triton.New(), &framework.Env{
		ClusterName: clusterName,
		LookupEnv:   func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CloudAPI:    cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	})
	return err
}
