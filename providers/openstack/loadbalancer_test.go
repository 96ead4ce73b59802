package openstack_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

const lbCluster = "test-cluster"

// lbFixture is the provider's load balancers on a simulated OpenStack
// (frameworktest.LBFixture) with two servers, node-a and node-b, and the
// simulator, for what the cloud holds and what it was asked.
type lbFixture struct {
	*frameworktest.LBFixture
	sim *openstacksim.Server
}

// newLBFixture starts a simulator; lbConf lines are added to the
// [LoadBalancer] section of its cloud.conf, and edit (if set) may change
// the result.
func newLBFixture(t *testing.T, lbConf string, edit func(sim *openstacksim.Server, conf string) string) *lbFixture {
	t.Helper()
	return newLBFixtureTTL(t, 0, lbConf, edit)
}

// newLBFixtureTTL is newLBFixture with the shared load-balancer list's TTL
// (framework.Env.LoadBalancerCacheTTL): -1 makes every sync read the
// cloud, for tests of changes made behind the CCM's back.
func newLBFixtureTTL(t *testing.T, ttl time.Duration, lbConf string, edit func(sim *openstacksim.Server, conf string) string) *lbFixture {
	t.Helper()
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	target := target(sim)
	target.CloudConfig = strings.Replace(target.CloudConfig, "[LoadBalancer]\n", "[LoadBalancer]\n"+lbConf, 1)
	if edit != nil {
		target.CloudConfig = edit(sim, target.CloudConfig)
	}
	f := &lbFixture{frameworktest.NewLBFixture(t, target, frameworktest.LBOptions{
		ClusterName: lbCluster,
		NewProvider: func() framework.Provider { return openstack.New() },
		CacheTTL:    ttl,
		NoAdvance:   true, // Octavia settles on reads
		Tune:        func(env *framework.Env) { env.InstanceCacheTTL = -1 },
	}), sim}
	f.addNode("node-a")
	f.addNode("node-b")
	return f
}

// addNode adds a server and its Node (with its InternalIP).
func (f *lbFixture) addNode(name string) *corev1.Node {
	s := f.sim.AddServer(openstacksim.NovaServer{Name: name})
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "default"}},
		Spec:       corev1.NodeSpec{ProviderID: "openstack:///" + s.ID},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.Ports[0].FixedIPs[0]}}},
	}
	f.Nodes = append(f.Nodes, n)
	return n
}

// writes are the successful mutating requests logged since mark, as
// "METHOD path".
func (f *lbFixture) writes(mark int) []string {
	var out []string
	for _, r := range f.sim.Requests()[mark:] {
		if r.Method != http.MethodGet && r.Status >= 200 && r.Status < 300 && !strings.Contains(r.Path, "/auth/tokens") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// calls counts the API requests since mark (token requests excluded).
func (f *lbFixture) calls(mark int) (reads, writes int) {
	for _, r := range f.sim.Requests()[mark:] {
		switch {
		case strings.Contains(r.Path, "/auth/tokens"):
		case r.Method == http.MethodGet:
			reads++
		default:
			writes++
		}
	}
	return reads, writes
}

func (f *lbFixture) mark() int { return len(f.sim.Requests()) }

func ingressIP(t *testing.T, s *corev1.LoadBalancerStatus) string {
	t.Helper()
	if s == nil || len(s.Ingress) != 1 || s.Ingress[0].IP == "" {
		t.Fatalf("status = %+v, want one IP", s)
	}
	return s.Ingress[0].IP
}

func memberIDs(f *lbFixture, nodes ...*corev1.Node) []string {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, strings.TrimPrefix(n.Spec.ProviderID, "openstack:///"))
	}
	slices.Sort(ids)
	return ids
}

// TestLoadBalancerLifecycle: one fully populated create, a retry while
// Octavia provisions, the floating IP once ACTIVE, the status with it, the
// ID annotation, a no-op sync with zero writes, and a delete that releases
// the floating IP.
func TestLoadBalancerLifecycle(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)

	mark := f.mark()
	if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("first sync: %v, want a RetryError while the load balancer is PENDING_CREATE", err)
	}
	st := f.sim.State()
	if len(st.LoadBalancers) != 1 || st.LoadBalancers[0].ProvisioningStatus != "PENDING_CREATE" || len(st.FloatingIPs) != 0 {
		t.Fatalf("after the first sync: %d LBs, FIPs %+v", len(st.LoadBalancers), st.FloatingIPs)
	}
	lbState := st.LoadBalancers[0]
	if lbState.Name != "kube_service_test-cluster_default_web" || !slices.Equal(lbState.Tags, []string{lbState.Name}) ||
		lbState.VipSubnetID != f.sim.Defaults().SubnetID || lbState.Provider != "amphora" {
		t.Errorf("load balancer = %+v", lbState)
	}
	if got := f.Fresh(t, svc).Annotations[openstack.AnnotationLoadBalancerID]; got != lbState.ID {
		t.Errorf("ID annotation = %q, want %q", got, lbState.ID)
	}
	status, syncs := f.EnsureReadySyncs(t, svc)
	createReads, createWrites := f.calls(mark)
	t.Logf("create: %d syncs, %d reads, %d writes", syncs+1, createReads, createWrites)
	if got := f.writes(mark); len(got) != 2 || !strings.HasPrefix(got[0], "POST /load-balancer/") || !strings.HasPrefix(got[1], "POST /network/v2.0/floatingips") {
		t.Errorf("create writes = %v, want the load balancer and its floating IP", got)
	}
	st = f.sim.State()
	if len(st.FloatingIPs) != 1 || st.FloatingIPs[0].PortID != st.LoadBalancers[0].VipPortID ||
		st.FloatingIPs[0].FloatingNetworkID != f.sim.Defaults().FloatingNetworkID {
		t.Fatalf("floating IPs = %+v", st.FloatingIPs)
	}
	ip := ingressIP(t, status)
	if ip != st.FloatingIPs[0].FloatingIPAddress {
		t.Errorf("status IP %s, want the floating IP %s", ip, st.FloatingIPs[0].FloatingIPAddress)
	}
	want := frameworktest.LoadBalancer{ID: lbState.ID, Name: lbState.Name, Listeners: []string{"TCP:80->:30080"}, Members: memberIDs(f, f.Nodes...), Addresses: []string{ip}}
	if diff := cmp.Diff(want, f.OnlyLoadBalancer(t)); diff != "" {
		t.Errorf("load balancer (-want +got):\n%s", diff)
	}

	mark = f.mark()
	again, err := f.Ensure(t, svc)
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := f.calls(mark)
	t.Logf("no-op sync: %d reads, %d writes", reads, writes)
	if writes != 0 || !cmp.Equal(status, again) {
		t.Errorf("no-op sync: %d writes, status %+v -> %+v", writes, status, again)
	}
	if got, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc)); err != nil || !exists || !cmp.Equal(got, status) {
		t.Errorf("GetLoadBalancer = %+v, %v, %v", got, exists, err)
	}

	f.DeleteDone(t, svc)
	if st := f.sim.State(); len(st.LoadBalancers)+len(st.FloatingIPs)+len(st.Listeners)+len(st.Pools) != 0 {
		t.Errorf("after delete: %+v", st)
	}
}

// TestLoadBalancerInternal: no floating IP; the status is the VIP.
func TestLoadBalancerInternal(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "internal", map[string]string{openstack.AnnotationInternal: "true"})
	status := f.EnsureReady(t, svc)
	st := f.sim.State()
	if len(st.FloatingIPs) != 0 {
		t.Errorf("floating IPs = %+v, want none", st.FloatingIPs)
	}
	if ip := ingressIP(t, status); ip != st.LoadBalancers[0].VipAddress {
		t.Errorf("status IP %s, want the VIP %s", ip, st.LoadBalancers[0].VipAddress)
	}

	// Going external adds a floating IP; back to internal releases it.
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations[openstack.AnnotationInternal] = "false" })
	status = f.EnsureReady(t, svc)
	if st := f.sim.State(); len(st.FloatingIPs) != 1 || ingressIP(t, status) != st.FloatingIPs[0].FloatingIPAddress {
		t.Errorf("external: status %+v, FIPs %+v", status, st.FloatingIPs)
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations[openstack.AnnotationInternal] = "true" })
	f.EnsureReady(t, svc)
	if st := f.sim.State(); len(st.FloatingIPs) != 0 {
		t.Errorf("internal again: FIPs %+v", st.FloatingIPs)
	}
}

// TestLoadBalancerDiscoverNetworks: without subnet-id and
// floating-network-id, the VIP goes on the first node's subnet and the
// floating IP on the only external network.
func TestLoadBalancerDiscoverNetworks(t *testing.T) {
	f := newLBFixture(t, "", func(_ *openstacksim.Server, conf string) string {
		var kept []string
		for _, line := range strings.Split(conf, "\n") {
			if !strings.HasPrefix(line, "subnet-id") && !strings.HasPrefix(line, "floating-network-id") {
				kept = append(kept, line)
			}
		}
		return strings.Join(kept, "\n")
	})
	svc := f.Service(t, "discover", nil)
	status := f.EnsureReady(t, svc)
	st := f.sim.State()
	if st.LoadBalancers[0].VipSubnetID != st.Defaults.SubnetID || len(st.FloatingIPs) != 1 ||
		st.FloatingIPs[0].FloatingNetworkID != st.Defaults.FloatingNetworkID || ingressIP(t, status) != st.FloatingIPs[0].FloatingIPAddress {
		t.Errorf("VIP subnet %s, floating IPs %+v, status %+v", st.LoadBalancers[0].VipSubnetID, st.FloatingIPs, status)
	}
}

// TestLoadBalancerAdopt: a load balancer named by the ID annotation, or
// with OCCM's name, is taken over without a create; one whose tree already
// matches gets no Octavia write at all.
func TestLoadBalancerAdopt(t *testing.T) {
	for _, tc := range []struct {
		name, lbName string
		byID, owned  bool
	}{
		{name: "by ID annotation", lbName: "made-by-hand", byID: true},
		{name: "by OCCM's name", lbName: "kube_service_test-cluster_default_adopted", owned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLBFixture(t, "", nil)
			existing, err := f.sim.AddLoadBalancer(openstacksim.ScenarioLoadBalancer{
				Name: tc.lbName, Tags: []string{tc.lbName},
				Listeners: []openstacksim.ScenarioListener{{Protocol: "TCP", Port: 80, Pool: &openstacksim.ScenarioPool{MemberPort: 30080, Members: []string{"node-a", "node-b"}}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			ann := map[string]string{}
			if tc.byID {
				ann[openstack.AnnotationLoadBalancerID] = existing.ID
			}
			svc := f.Service(t, "adopted", ann)
			mark := f.mark()
			status := f.EnsureReady(t, svc)
			if got := f.writes(mark); len(got) != 1 || !strings.HasPrefix(got[0], "POST /network/v2.0/floatingips") {
				t.Errorf("writes = %v, want only the floating IP", got)
			}
			if got := f.OnlyLoadBalancer(t); got.ID != existing.ID {
				t.Errorf("load balancer %s, want the adopted %s", got.ID, existing.ID)
			}
			if got := f.Fresh(t, svc).Annotations[openstack.AnnotationLoadBalancerID]; got != existing.ID {
				t.Errorf("ID annotation = %q", got)
			}
			ingressIP(t, status)

			f.DeleteDone(t, svc)
			st := f.sim.State()
			if len(st.FloatingIPs) != 0 {
				t.Errorf("the floating IP the CCM made is left: %+v", st.FloatingIPs)
			}
			switch {
			case tc.owned && len(st.LoadBalancers) != 0:
				t.Errorf("OCCM's load balancer left after delete: %+v", st.LoadBalancers)
			case !tc.owned && (len(st.LoadBalancers) != 1 || len(st.Listeners)+len(st.Pools) != 0):
				t.Errorf("adopted load balancer: want it kept without listeners and pools, got %d LBs, %d listeners, %d pools",
					len(st.LoadBalancers), len(st.Listeners), len(st.Pools))
			}
		})
	}
}

// TestLoadBalancerForeign: the ID annotation naming another Service's load
// balancer asks to share it (loadbalancer_shared_test.go); with a port the
// other Service's listener has, it is refused, and deleting the Service
// leaves the load balancer alone.
func TestLoadBalancerForeign(t *testing.T) {
	f := newLBFixture(t, "", nil)
	owner := f.Service(t, "owner", nil)
	f.EnsureReady(t, owner)
	id := f.OnlyLoadBalancer(t).ID
	other := f.Service(t, "other", map[string]string{openstack.AnnotationLoadBalancerID: id})
	mark := f.mark()
	if _, err := f.Ensure(t, other); err == nil || !strings.Contains(err.Error(), "already used by listener") {
		t.Errorf("EnsureLoadBalancer = %v, want an error about the port in use", err)
	}
	f.DeleteDone(t, other)
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("writes = %v, want none", got)
	}
	f.OnlyLoadBalancer(t)
}

// TestLoadBalancerDeleteFloatingIP: delete releases the floating IP unless
// keep-floatingip; a kept one is found again by a new load balancer of the
// Service.
func TestLoadBalancerDeleteFloatingIP(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "keep", map[string]string{openstack.AnnotationPrefix + "keep-floatingip": "true"})
	first := ingressIP(t, f.EnsureReady(t, svc))
	f.DeleteDone(t, svc)
	st := f.sim.State()
	if len(st.LoadBalancers) != 0 || len(st.FloatingIPs) != 1 || st.FloatingIPs[0].PortID != "" {
		t.Fatalf("after delete with keep-floatingip: %d LBs, FIPs %+v", len(st.LoadBalancers), st.FloatingIPs)
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, openstack.AnnotationLoadBalancerID) })
	if again := ingressIP(t, f.EnsureReady(t, svc)); again != first {
		t.Errorf("recreated with %s, want the kept floating IP %s", again, first)
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, openstack.AnnotationPrefix+"keep-floatingip") })
	f.DeleteDone(t, svc)
	if st := f.sim.State(); len(st.FloatingIPs) != 0 {
		t.Errorf("floating IPs after delete = %+v, want none", st.FloatingIPs)
	}
}

// TestLoadBalancerSerial: with provider-requires-serial-api-calls the load
// balancer is created empty and filled one object per sync, members one by
// one.
func TestLoadBalancerSerial(t *testing.T) {
	f := newLBFixture(t, "provider-requires-serial-api-calls = true\ncreate-monitor = true\n", nil)
	svc := f.Service(t, "web", nil)
	mark := f.mark()
	f.EnsureReady(t, svc)
	var got []string
	for _, w := range f.writes(mark) {
		parts := strings.Split(w, "/")
		got = append(got, parts[len(parts)-1])
	}
	want := []string{"loadbalancers", "floatingips", "listeners", "pools", "members", "members", "healthmonitors"}
	if !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if lb := f.OnlyLoadBalancer(t); len(lb.Members) != 2 || !slices.Equal(lb.Listeners, []string{"TCP:80->:30080"}) {
		t.Errorf("load balancer = %+v", lb)
	}
}

// TestLoadBalancerCascadeDeleteOff: [LoadBalancer] cascade-delete = false
// removes pools and listeners one by one, then the load balancer.
func TestLoadBalancerCascadeDeleteOff(t *testing.T) {
	f := newLBFixture(t, "cascade-delete = false\n", nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	mark := f.mark()
	f.DeleteDone(t, svc)
	var deletes []string
	for _, w := range f.writes(mark) {
		parts := strings.Split(w, "/")
		deletes = append(deletes, parts[len(parts)-2])
	}
	if want := []string{"floatingips", "pools", "listeners", "loadbalancers"}; !slices.Equal(deletes, want) {
		t.Errorf("deleted %v, want %v", deletes, want)
	}
	if n := len(f.sim.State().LoadBalancers); n != 0 {
		t.Errorf("%d load balancers left", n)
	}
}

// TestEveryProblemInOneWarning: a value that does not decode does not hide
// the class and node-selector checks: one Warning names all three.
func TestEveryProblemInOneWarning(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", map[string]string{
		openstack.AnnotationPrefix + "timeout-client-data": "abc",
		openstack.AnnotationPrefix + "class":               "no-such-class",
		openstack.AnnotationPrefix + "node-selector":       "=value",
	})
	if _, err := f.Ensure(t, svc); err == nil || frameworktest.IsRetry(err) {
		t.Fatalf("EnsureLoadBalancer = %v; want an error", err)
	}
	evs := f.Drain()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning InvalidAnnotation") {
		t.Fatalf("events = %q, want one Warning", evs)
	}
	for _, key := range []string{"timeout-client-data", "class", "node-selector"} {
		if !strings.Contains(evs[0], openstack.AnnotationPrefix+key) {
			t.Errorf("the Warning does not name %s: %s", openstack.AnnotationPrefix+key, evs[0])
		}
	}
}
