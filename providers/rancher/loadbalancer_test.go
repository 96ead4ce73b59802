package rancher_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

const lbStack = "kubernetes-loadbalancers"

// lbFixture is the provider on a simulated Cattle environment of two
// hosts, with a fake API server for the Services (the pipeline writes the
// ID annotation there) and an event recorder. afterWrite, when set, runs
// after each write the simulator answered.
type lbFixture struct {
	ctx        context.Context
	sim        *ranchersim.Server
	url        string
	kube       *fake.Clientset
	events     *record.FakeRecorder
	lb         cloudprovider.LoadBalancer
	nodes      []*corev1.Node
	afterWrite func(r *http.Request)
	// env are variables of the CCM's besides the simulator's CATTLE_*.
	env map[string]string
}

func newLBFixture(t *testing.T) *lbFixture {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	f := &lbFixture{sim: sim, kube: fake.NewClientset(), events: record.NewFakeRecorder(100)}
	// The simulator behind a handler that sees each write done.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sim.Handler().ServeHTTP(w, r)
		if r.Method != http.MethodGet && f.afterWrite != nil {
			f.afterWrite(r)
		}
	}))
	t.Cleanup(front.Close)
	f.url = front.URL
	_, f.ctx = ktesting.NewTestContext(t)
	f.lb = f.newLB(t, f.kube)
	for _, name := range []string{"node-b", "node-a"} {
		h := sim.AddHost(ranchersim.Host{Hostname: name})
		f.nodes = append(f.nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.NodeSpec{ProviderID: "rancher://" + h.UUID},
			Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: h.AgentIPAddress}}},
		})
	}
	return f
}

// newLB starts a provider (a CCM process) on the fixture's environment;
// client nil: it cannot write the ID annotation.
func (f *lbFixture) newLB(t *testing.T, client kubernetes.Interface) cloudprovider.LoadBalancer {
	t.Helper()
	vars := f.sim.Env(f.url)
	maps.Copy(vars, f.env)
	cloud, err := framework.NewCloud(f.ctx, rancher.New(), &framework.Env{
		Client: client, Recorder: f.events, ClusterName: "test-cluster",
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	lb, ok := cloud.LoadBalancer()
	if !ok {
		t.Fatal("the provider has no load balancers")
	}
	return lb
}

// service stores a LoadBalancer Service with a TCP and a UDP port.
func (f *lbFixture) service(t *testing.T, name string, annotations map[string]string, mutate ...func(*corev1.Service)) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
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

func (f *lbFixture) update(t *testing.T, svc *corev1.Service, mutate func(*corev1.Service)) {
	t.Helper()
	s := f.fresh(t, svc)
	mutate(s)
	if _, err := f.kube.CoreV1().Services(s.Namespace).Update(f.ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ensureReady syncs the Service as the service controller does until its
// load balancer is ready; each RetryError is one more sync, after the
// simulated Cattle moves on. It returns the status and the syncs that
// retried.
func (f *lbFixture) ensureReady(t *testing.T, svc *corev1.Service, lb cloudprovider.LoadBalancer) (*corev1.LoadBalancerStatus, int) {
	t.Helper()
	for i := range 20 {
		status, err := lb.EnsureLoadBalancer(f.ctx, "test-cluster", f.fresh(t, svc), f.nodes)
		if !isRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancer: %v", err)
			}
			return status, i
		}
		t.Logf("sync %d: %v", i, err)
		f.sim.Advance()
	}
	t.Fatal("EnsureLoadBalancer: not ready after 20 syncs")
	return nil, 0
}

func (f *lbFixture) deleteDone(t *testing.T, svc *corev1.Service) {
	t.Helper()
	for range 10 {
		err := f.lb.EnsureLoadBalancerDeleted(f.ctx, "test-cluster", f.fresh(t, svc))
		if !isRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
			}
			return
		}
		f.sim.Advance()
	}
	t.Fatal("EnsureLoadBalancerDeleted: not done after 10 syncs")
}

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

func isRetry(err error) bool {
	var retry *api.RetryError
	return errors.As(err, &retry)
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
	f := newLBFixture(t)
	svc := f.service(t, "web", nil)
	status, retries := f.ensureReady(t, svc, f.lb)
	if retries == 0 {
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
	if ext.Name != name+"-nodes" || ext.StackID != stacks[0].ID || ext.HealthCheck != nil {
		t.Errorf("external service %q in %s (health check %+v), want %q in the stack without health check", ext.Name, ext.StackID, ext.HealthCheck, name+"-nodes")
	}
	if diff := cmp.Diff(nodeIPs(f.nodes), slices.Sorted(slices.Values(ext.ExternalIPAddresses))); diff != "" {
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
	if id := f.fresh(t, svc).Annotations[rancher.AnnotationLoadBalancerID]; id != lb.ID {
		t.Errorf("ID annotation %q, want %s", id, lb.ID)
	}

	// Nothing changed: no write.
	before := f.sim.Writes()
	if _, n := f.ensureReady(t, svc, f.lb); n != 0 || f.sim.Writes() != before {
		t.Errorf("an idle sync retried %d times and made %d writes, want none", n, f.sim.Writes()-before)
	}

	// A node leaves: one PUT of the external service, the load balancer
	// untouched.
	f.nodes = f.nodes[:1]
	before = f.sim.Writes()
	if err := f.lb.UpdateLoadBalancer(f.ctx, "test-cluster", f.fresh(t, svc), f.nodes); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	if w := f.sim.Writes() - before; w != 1 {
		t.Errorf("a node leaving made %d writes, want 1", w)
	}
	if got, _ := f.sim.Service(ext.ID); !slices.Equal(got.ExternalIPAddresses, nodeIPs(f.nodes)) {
		t.Errorf("external service IPs %v, want %v", got.ExternalIPAddresses, nodeIPs(f.nodes))
	}

	// A port changes: upgraded in place.
	f.update(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081 })
	status, _ = f.ensureReady(t, svc, f.lb)
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

	f.deleteDone(t, svc)
	if n := len(live(f.sim, ranchersim.KindLoadBalancer)) + len(live(f.sim, ranchersim.KindExternal)); n != 0 {
		t.Errorf("after delete Cattle holds %d live services, want none: %+v", n, f.sim.Services())
	}
	f.deleteDone(t, svc) // twice: already gone is done
}

var cmpPortRule = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Priority"
}, cmp.Ignore())

// TestLoadBalancerLocalHealthCheck: externalTrafficPolicy Local checks
// the nodes on the healthCheckNodePort; moving to Cluster replaces the
// external service (Cattle cannot change a health check in place) without
// the load balancer ever losing its backend.
func TestLoadBalancerLocalHealthCheck(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, "local", nil, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	f.ensureReady(t, svc, f.lb)
	ext := onlyService(t, f.sim, ranchersim.KindExternal)
	if hc := ext.HealthCheck; hc == nil || hc.Port != 32100 || !strings.Contains(hc.RequestLine, "/healthz") {
		t.Fatalf("health check %+v, want GET /healthz on 32100", hc)
	}
	lbID := onlyService(t, f.sim, ranchersim.KindLoadBalancer).ID
	f.afterWrite = func(*http.Request) { assertBackend(t, f.sim, lbID) }
	f.update(t, svc, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		s.Spec.HealthCheckNodePort = 0
	})
	f.ensureReady(t, svc, f.lb)
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
	f := newLBFixture(t)
	svc := f.service(t, "quick", nil)
	f.ensureReady(t, svc, f.lb)
	f.afterWrite = func(r *http.Request) {
		if r.URL.Query().Get("action") != "upgrade" {
			f.sim.Advance()
		}
	}

	f.update(t, svc, func(s *corev1.Service) {
		s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	for i := 0; onlyService(t, f.sim, ranchersim.KindLoadBalancer).State != ranchersim.StateUpgrading; i++ {
		if _, err := f.lb.EnsureLoadBalancer(f.ctx, "test-cluster", f.fresh(t, svc), f.nodes); !isRetry(err) || i == 10 {
			t.Fatalf("sync %d after the change: %v, want retries until Cattle upgrades the ports", i, err)
		}
	}
	f.update(t, svc, func(s *corev1.Service) { s.Spec.Ports[1].Port = 5353 })
	f.ensureReady(t, svc, f.lb)

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
	f := newLBFixture(t)
	svc := f.service(t, "web", nil)
	first := f.newLB(t, nil) // cannot write the annotation
	if _, err := first.EnsureLoadBalancer(f.ctx, "test-cluster", svc, f.nodes); err == nil {
		t.Fatal("the first sync was ready, want a retry while Cattle registers")
	}
	created := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
	f.sim.Advance()
	f.ensureReady(t, svc, f.newLB(t, f.kube))
	if got := onlyService(t, f.sim, ranchersim.KindLoadBalancer); got.ID != created.ID {
		t.Errorf("the next CCM made load balancer %s, want %s adopted", got.ID, created.ID)
	}
	onlyService(t, f.sim, ranchersim.KindExternal)
	if id := f.fresh(t, svc).Annotations[rancher.AnnotationLoadBalancerID]; id != created.ID {
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
			f := newLBFixture(t)
			mutate := tc.mutate
			if mutate == nil {
				mutate = func(*corev1.Service) {}
			}
			svc := f.service(t, "web", tc.annotations, mutate)
			if _, err := f.lb.EnsureLoadBalancer(f.ctx, "test-cluster", svc, f.nodes); err == nil {
				t.Fatal("EnsureLoadBalancer: no error")
			}
			if w := f.sim.Writes(); w != 0 {
				t.Errorf("%d writes, want none", w)
			}
			events := f.drainEvents()
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
	f := newLBFixture(t)
	svc := f.service(t, "early", nil)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "test-cluster", f.fresh(t, svc), f.nodes); !isRetry(err) {
		t.Fatalf("first sync: %v, want a retry while Cattle registers the load balancer", err)
	}
	f.sim.Advance()
	if lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer); lb.State != ranchersim.StateInactive {
		t.Fatalf("load balancer %s after one step, want inactive (created without startOnCreate)", lb.State)
	}

	f.update(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port, s.Spec.Ports[0].NodePort = 8080, 30081 })
	f.ensureReady(t, svc, f.lb)
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
