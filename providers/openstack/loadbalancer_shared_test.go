package openstack_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// lbNameOf is OCCM's load balancer name of a Service of the fixture.
func lbNameOf(name string) string { return "kube_service_" + lbCluster + "_default_" + name }

// onPort gives a Service one TCP port instead of 80 -> 30080.
func onPort(port, nodePort int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "p", Protocol: corev1.ProtocolTCP, Port: port, NodePort: nodePort}}
	}
}

func sharingLB(id string) map[string]string {
	return map[string]string{openstack.AnnotationLoadBalancerID: id}
}

// remove deletes a Service from the API server (after its load balancer
// was deleted, as the service controller's finalizer lets it go).
func (f *lbFixture) remove(t *testing.T, svc *corev1.Service) {
	t.Helper()
	if err := f.Kube.CoreV1().Services(svc.Namespace).Delete(f.Ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// listenersByTag maps each listener, as "TCP:80", to its tags.
func listenersByTag(st openstacksim.Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, l := range st.Listeners {
		out[l.Protocol+":"+strconv.Itoa(l.ProtocolPort)] = l.Tags
	}
	return out
}

// objectIDs are the IDs of the listeners tagged with name (untagged ones
// for ""), and of their pools, members and monitors.
func objectIDs(st openstacksim.Snapshot, name string) []string {
	var ids []string
	for _, l := range st.Listeners {
		if name == "" && len(l.Tags) != 0 || name != "" && !slices.Contains(l.Tags, name) {
			continue
		}
		ids = append(ids, l.ID)
		if l.DefaultPoolID == "" {
			continue
		}
		ids = append(ids, l.DefaultPoolID)
		for _, m := range membersOf(st, l.DefaultPoolID) {
			ids = append(ids, m.ID)
		}
		if hm := monitorOf(st, l.DefaultPoolID); hm != nil {
			ids = append(ids, hm.ID)
		}
	}
	return ids
}

// touching are the writes whose path names one of ids.
func touching(writes, ids []string) []string {
	var out []string
	for _, w := range writes {
		for _, id := range ids {
			if strings.Contains(w, id) {
				out = append(out, w)
			}
		}
	}
	return out
}

// noopSync checks a sync of svc makes no write and returns its status.
func (f *lbFixture) noopSync(t *testing.T, svc *corev1.Service) *corev1.LoadBalancerStatus {
	t.Helper()
	mark := f.mark()
	status, err := f.Ensure(t, svc)
	if err != nil {
		t.Fatalf("no-op sync of %s: %v", svc.Name, err)
	}
	if _, writes := f.calls(mark); writes != 0 {
		t.Errorf("no-op sync of %s: writes %v", svc.Name, f.writes(mark))
	}
	return status
}

// shareTwo makes Service a (80 -> 30080) with its load balancer, and
// Service b (8080 -> 30081) sharing it. It checks that b's syncs wrote
// nothing of a's.
func shareTwo(t *testing.T, f *lbFixture) (a, b *corev1.Service, id, ip string) {
	t.Helper()
	a = f.Service(t, "a", nil)
	ip = ingressIP(t, f.EnsureReady(t, a))
	id = f.OnlyLoadBalancer(t).ID
	aObjects := objectIDs(f.sim.State(), lbNameOf("a"))
	b = f.Service(t, "b", sharingLB(id), onPort(8080, 30081))
	mark := f.mark()
	if got := ingressIP(t, f.EnsureReady(t, b)); got != ip {
		t.Errorf("b's status IP %s, want the shared load balancer's %s", got, ip)
	}
	if got := touching(f.writes(mark), aObjects); len(got) != 0 {
		t.Errorf("b's syncs wrote a's objects: %v", got)
	}
	return a, b, id, ip
}

// TestSharedLoadBalancer: a Service naming another Service's load balancer
// in load-balancer-id joins it: its own listener, pool and members, tagged
// with its name, the load balancer's tags listing both, one floating IP and
// one status for both. Syncs with nothing to do write nothing; a node
// change makes each Service update its own pool only; the Service that
// joined leaves with its listener and tag, and the last one deletes the
// load balancer and its floating IP.
func TestSharedLoadBalancer(t *testing.T) {
	f := newLBFixture(t, "", nil)
	a, b, id, ip := shareTwo(t, f)

	st := f.sim.State()
	if len(st.LoadBalancers) != 1 || len(st.FloatingIPs) != 1 {
		t.Fatalf("%d load balancers, %d floating IPs, want one each", len(st.LoadBalancers), len(st.FloatingIPs))
	}
	if got, want := st.LoadBalancers[0].Tags, []string{lbNameOf("a"), lbNameOf("b")}; !slices.Equal(got, want) {
		t.Errorf("load balancer tags = %v, want %v", got, want)
	}
	want := map[string][]string{"TCP:80": {lbNameOf("a")}, "TCP:8080": {lbNameOf("b")}}
	if got := listenersByTag(st); !equalTags(got, want) {
		t.Errorf("listeners = %v, want %v", got, want)
	}
	if l := listenerByPort(t, st, "TCP", 8080); len(membersOf(st, l.DefaultPoolID)) != 2 || membersOf(st, l.DefaultPoolID)[0].ProtocolPort != 30081 {
		t.Errorf("b's members = %+v", membersOf(st, l.DefaultPoolID))
	}
	if got := f.Fresh(t, b).Annotations[openstack.AnnotationLoadBalancerID]; got != id {
		t.Errorf("b's ID annotation = %q", got)
	}
	for _, svc := range []*corev1.Service{a, b} {
		if got := ingressIP(t, f.noopSync(t, svc)); got != ip {
			t.Errorf("%s: status IP %s, want %s", svc.Name, got, ip)
		}
		if status, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc)); err != nil || !exists || ingressIP(t, status) != ip {
			t.Errorf("GetLoadBalancer(%s) = %+v, %v, %v", svc.Name, status, exists, err)
		}
	}

	// A node joins: each Service's sync replaces the members of its own
	// pool, and nothing of the other's.
	f.addNode("node-c")
	for _, pair := range [][2]*corev1.Service{{a, b}, {b, a}} {
		others := objectIDs(f.sim.State(), lbNameOf(pair[1].Name))
		mark := f.mark()
		f.EnsureReady(t, pair[0])
		if got := touching(f.writes(mark), others); len(got) != 0 {
			t.Errorf("%s's sync wrote %s's objects: %v", pair[0].Name, pair[1].Name, got)
		}
	}
	if got := f.OnlyLoadBalancer(t).Members; len(got) != 3 {
		t.Errorf("members = %v, want the 3 nodes", got)
	}
	f.noopSync(t, a)
	f.noopSync(t, b)

	// b leaves: its listener and tag go, a's stay.
	aObjects := objectIDs(f.sim.State(), lbNameOf("a"))
	mark := f.mark()
	f.DeleteDone(t, b)
	f.remove(t, b)
	if got := touching(f.writes(mark), aObjects); len(got) != 0 {
		t.Errorf("b's delete wrote a's objects: %v", got)
	}
	st = f.sim.State()
	if len(st.LoadBalancers) != 1 || len(st.FloatingIPs) != 1 || !slices.Equal(st.LoadBalancers[0].Tags, []string{lbNameOf("a")}) {
		t.Fatalf("after b left: %d load balancers (tags %v), %d floating IPs", len(st.LoadBalancers), st.LoadBalancers[0].Tags, len(st.FloatingIPs))
	}
	if got, want := listenersByTag(st), map[string][]string{"TCP:80": {lbNameOf("a")}}; !equalTags(got, want) || len(st.Pools) != 1 {
		t.Errorf("after b left: listeners %v, %d pools; want %v", got, len(st.Pools), want)
	}
	if got := ingressIP(t, f.noopSync(t, a)); got != ip {
		t.Errorf("a's status IP %s, want %s", got, ip)
	}

	// a is the last: the load balancer and its floating IP go.
	f.DeleteDone(t, a)
	if st := f.sim.State(); len(st.LoadBalancers)+len(st.FloatingIPs)+len(st.Listeners)+len(st.Pools) != 0 {
		t.Errorf("after the last Service: %d LBs, %d FIPs, %d listeners, %d pools", len(st.LoadBalancers), len(st.FloatingIPs), len(st.Listeners), len(st.Pools))
	}
}

func equalTags(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestSharedLoadBalancerCreatorLeaves: deleting the Service a load balancer
// was created for, while another shares it, keeps the load balancer and its
// floating IP for the other; deleting that one then deletes both.
func TestSharedLoadBalancerCreatorLeaves(t *testing.T) {
	f := newLBFixture(t, "", nil)
	a, b, _, ip := shareTwo(t, f)
	bObjects := objectIDs(f.sim.State(), lbNameOf("b"))
	mark := f.mark()
	f.DeleteDone(t, a)
	f.remove(t, a)
	if got := touching(f.writes(mark), bObjects); len(got) != 0 {
		t.Errorf("a's delete wrote b's objects: %v", got)
	}
	st := f.sim.State()
	if len(st.LoadBalancers) != 1 || st.LoadBalancers[0].Name != lbNameOf("a") || !slices.Equal(st.LoadBalancers[0].Tags, []string{lbNameOf("b")}) ||
		len(st.FloatingIPs) != 1 {
		t.Fatalf("after a left: load balancers %+v, floating IPs %+v", st.LoadBalancers, st.FloatingIPs)
	}
	if got, want := listenersByTag(st), map[string][]string{"TCP:8080": {lbNameOf("b")}}; !equalTags(got, want) || len(st.Pools) != 1 {
		t.Errorf("after a left: listeners %v, %d pools; want %v", got, len(st.Pools), want)
	}
	if got := ingressIP(t, f.noopSync(t, b)); got != ip {
		t.Errorf("b's status IP %s, want the kept floating IP %s", got, ip)
	}

	f.DeleteDone(t, b)
	if st := f.sim.State(); len(st.LoadBalancers)+len(st.FloatingIPs)+len(st.Listeners)+len(st.Pools) != 0 {
		t.Errorf("after the last Service: %d LBs, %d FIPs, %d listeners, %d pools", len(st.LoadBalancers), len(st.FloatingIPs), len(st.Listeners), len(st.Pools))
	}
}

// TestSharedLoadBalancerLimit: a Service that would make more than
// max-shared-lb Services share a load balancer gets a Warning Event and no
// write, and deleting it leaves the load balancer alone; a larger
// max-shared-lb lets it in.
func TestSharedLoadBalancerLimit(t *testing.T) {
	f := newLBFixture(t, "", nil)
	_, _, id, _ := shareTwo(t, f)
	before := f.sim.State()
	f.Drain()
	c := f.Service(t, "c", sharingLB(id), onPort(9090, 30082))
	mark := f.mark()
	if _, err := f.Ensure(t, c); err == nil || frameworktest.IsRetry(err) || !strings.Contains(err.Error(), "max-shared-lb is 2") {
		t.Errorf("third Service: %v, want an error about max-shared-lb", err)
	}
	if events := strings.Join(f.Drain(), "\n"); !strings.Contains(events, "Warning SharedLoadBalancerFull") {
		t.Errorf("events lack the Warning:\n%s", events)
	}
	f.DeleteDone(t, c)
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("writes = %v, want none", got)
	}
	if after := f.sim.State(); len(after.Listeners) != len(before.Listeners) || !slices.Equal(after.LoadBalancers[0].Tags, before.LoadBalancers[0].Tags) {
		t.Errorf("the load balancer changed: %+v", after.LoadBalancers)
	}

	f = newLBFixture(t, "max-shared-lb = 3\n", nil)
	_, _, id, ip := shareTwo(t, f)
	c = f.Service(t, "c", sharingLB(id), onPort(9090, 30082))
	if got := ingressIP(t, f.EnsureReady(t, c)); got != ip {
		t.Errorf("c's status IP %s, want %s", got, ip)
	}
	if st := f.sim.State(); len(st.LoadBalancers) != 1 || len(st.Listeners) != 3 || len(st.LoadBalancers[0].Tags) != 3 {
		t.Errorf("with max-shared-lb = 3: %d load balancers, %d listeners, tags %v", len(st.LoadBalancers), len(st.Listeners), st.LoadBalancers[0].Tags)
	}
}

// TestSharedLoadBalancerPortInUse: a Service asking for a port another
// Service's listener has on the shared load balancer gets a Warning Event
// and no write, and neither does an internal Service on a load balancer
// with a floating IP.
func TestSharedLoadBalancerPortInUse(t *testing.T) {
	f := newLBFixture(t, "", nil)
	a := f.Service(t, "a", nil)
	f.EnsureReady(t, a)
	id := f.OnlyLoadBalancer(t).ID
	f.Drain()
	for _, tc := range []struct {
		name, event string
		ann         map[string]string
	}{
		{name: "clash", event: "Warning SharedLoadBalancerPortInUse", ann: sharingLB(id)},
		{name: "internal", event: "Warning SharedLoadBalancerAddress", ann: map[string]string{openstack.AnnotationLoadBalancerID: id, openstack.AnnotationInternal: "true"}},
	} {
		port := int32(80)
		if tc.name == "internal" {
			port = 8080
		}
		svc := f.Service(t, tc.name, tc.ann, onPort(port, 30090))
		mark := f.mark()
		if _, err := f.Ensure(t, svc); err == nil || frameworktest.IsRetry(err) {
			t.Errorf("%s: EnsureLoadBalancer = %v, want an error", tc.name, err)
		}
		if got := f.writes(mark); len(got) != 0 {
			t.Errorf("%s: writes %v, want none", tc.name, got)
		}
		if events := strings.Join(f.Drain(), "\n"); !strings.Contains(events, tc.event) {
			t.Errorf("%s: events lack %q:\n%s", tc.name, tc.event, events)
		}
	}
	if st := f.sim.State(); len(st.Listeners) != 1 || !slices.Equal(st.LoadBalancers[0].Tags, []string{lbNameOf("a")}) {
		t.Errorf("the load balancer changed: %+v, %d listeners", st.LoadBalancers[0], len(st.Listeners))
	}
	f.noopSync(t, a)
}

// TestSharedLoadBalancerMadeByHand: two Services naming a load balancer
// made outside the CCM share it. The first to adopt it (the primary) keeps
// managing its listeners without tags and the floating IP; the other adds
// a listener of its own. Each leaves with its listeners and tag; the load
// balancer stays, and the floating IP the CCM made goes with the last.
func TestSharedLoadBalancerMadeByHand(t *testing.T) {
	f := newLBFixture(t, "", nil)
	existing, err := f.sim.AddLoadBalancer(openstacksim.ScenarioLoadBalancer{
		Name:      "made-by-hand",
		Listeners: []openstacksim.ScenarioListener{{Protocol: "TCP", Port: 80, Pool: &openstacksim.ScenarioPool{MemberPort: 30080, Members: []string{"node-a", "node-b"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := f.Service(t, "a", sharingLB(existing.ID))
	b := f.Service(t, "b", sharingLB(existing.ID), onPort(8080, 30081))
	handMade := objectIDs(f.sim.State(), "")
	ip := ingressIP(t, f.EnsureReady(t, a))
	mark := f.mark()
	if got := ingressIP(t, f.EnsureReady(t, b)); got != ip {
		t.Errorf("b's status IP %s, want %s", got, ip)
	}
	st := f.sim.State()
	if got := touching(f.writes(mark), append(handMade, listenerByPort(t, st, "TCP", 80).ID)); len(got) != 0 {
		t.Errorf("b wrote the listener a uses: %v", got)
	}
	if got, want := st.LoadBalancers[0].Tags, []string{lbNameOf("a"), lbNameOf("b")}; len(st.LoadBalancers) != 1 || !slices.Equal(got, want) {
		t.Errorf("load balancers %+v, want one tagged %v", st.LoadBalancers, want)
	}
	if got, want := listenersByTag(st), map[string][]string{"TCP:80": {}, "TCP:8080": {lbNameOf("b")}}; !equalTags(got, want) {
		t.Errorf("listeners = %v, want %v", got, want)
	}
	f.noopSync(t, a)
	f.noopSync(t, b)

	f.DeleteDone(t, a)
	f.remove(t, a)
	st = f.sim.State()
	if got, want := listenersByTag(st), map[string][]string{"TCP:8080": {lbNameOf("b")}}; len(st.LoadBalancers) != 1 || !equalTags(got, want) ||
		len(st.FloatingIPs) != 1 || !slices.Equal(st.LoadBalancers[0].Tags, []string{lbNameOf("b")}) {
		t.Errorf("after a left: listeners %v, load balancers %+v, %d floating IPs", got, st.LoadBalancers, len(st.FloatingIPs))
	}
	f.noopSync(t, b)

	f.DeleteDone(t, b)
	st = f.sim.State()
	if len(st.LoadBalancers) != 1 || len(st.Listeners)+len(st.Pools)+len(st.FloatingIPs)+len(st.LoadBalancers[0].Tags) != 0 {
		t.Errorf("after the last Service: %d load balancers (want the one made by hand, untagged), %d listeners, %d pools, %d floating IPs",
			len(st.LoadBalancers), len(st.Listeners), len(st.Pools), len(st.FloatingIPs))
	}
}

// TestSharedLoadBalancerPortChange: a Service sharing a load balancer that
// renumbers its port replaces its own listener (keeping its pool) and
// touches nothing of the other Service's.
func TestSharedLoadBalancerPortChange(t *testing.T) {
	f := newLBFixture(t, "", nil)
	a, b, _, _ := shareTwo(t, f)
	before := f.sim.State()
	bPool := listenerByPort(t, before, "TCP", 8080).DefaultPoolID
	aObjects := objectIDs(before, lbNameOf("a"))
	f.UpdateService(t, b, onPort(8081, 30081))
	mark := f.mark()
	f.EnsureReady(t, b)
	if got := touching(f.writes(mark), aObjects); len(got) != 0 {
		t.Errorf("b's syncs wrote a's objects: %v", got)
	}
	st := f.sim.State()
	if got, want := listenersByTag(st), map[string][]string{"TCP:80": {lbNameOf("a")}, "TCP:8081": {lbNameOf("b")}}; !equalTags(got, want) || len(st.Pools) != 2 {
		t.Errorf("listeners %v, %d pools; want %v and 2 pools", got, len(st.Pools), want)
	}
	if got := listenerByPort(t, st, "TCP", 8081).DefaultPoolID; got != bPool {
		t.Errorf("b's new listener has pool %s, want its old pool %s", got, bPool)
	}
	f.noopSync(t, a)
	f.noopSync(t, b)
}

// TestSharedLoadBalancerError: a shared load balancer in ERROR is not
// recreated by the Service it was made for: a new one would lack the other
// Service's listeners.
func TestSharedLoadBalancerError(t *testing.T) {
	// ERROR is set behind the CCM's back: without the shared list, the
	// next sync sees it.
	f := newLBFixtureTTL(t, -1, "", nil)
	a, _, id, _ := shareTwo(t, f)
	f.sim.SetLoadBalancerStatus(id, "ERROR")
	mark := f.mark()
	if _, err := f.Ensure(t, a); err == nil || frameworktest.IsRetry(err) || !strings.Contains(err.Error(), "shared with") {
		t.Errorf("sync of a shared load balancer in ERROR = %v, want an error", err)
	}
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("writes = %v, want none", got)
	}
	if got := f.OnlyLoadBalancer(t); got.ID != id {
		t.Errorf("load balancer %s, want %s kept", got.ID, id)
	}
}
