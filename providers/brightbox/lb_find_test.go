package brightbox_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// listLBs is the list of every load balancer, which embeds each one's
// nodes as whole servers.
const listLBs = "GET /1.0/load_balancers"

// TestLoadBalancersNeverListed: creating load balancers, syncing them
// with nothing changed and with a node more, finding them again without
// their ID annotation, and deleting them never lists the load balancers
// (1,000 of them over 5,000 nodes would be 5 million servers in one
// answer): a load balancer is read by ID, or found through its cloud IP.
func TestLoadBalancersNeverListed(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svcs := make([]*corev1.Service, 3)
	for i := range svcs {
		svcs[i] = f.Service(t, fmt.Sprintf("web-%d", i), nil)
		f.EnsureReady(t, svcs[i])
	}
	f.AddNodes("node-c")
	for _, svc := range svcs {
		if err := f.Update(t, svc); err != nil {
			t.Fatal(err)
		}
	}
	// Without the ID annotation, as after the existing CCM: found by
	// name through the cloud IP, with no write.
	svc := f.UpdateService(t, svcs[0], func(s *corev1.Service) { delete(s.Annotations, brightbox.AnnotationLoadBalancerID) })
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("finding the load balancer without its ID annotation made %d writes, want 0", n)
	}
	if id, want := f.Fresh(t, svc).Annotations[brightbox.AnnotationLoadBalancerID], named(liveLBs(f.sim), "web-0.default."+clusterName, lbName); len(want) != 1 || id != want[0].ID {
		t.Errorf("ID annotation = %q, want the load balancer's, %+v", id, want)
	}
	for _, svc := range svcs {
		f.DeleteDone(t, f.Fresh(t, svc))
	}
	if n := f.sim.Stats()[listLBs]; n != 0 {
		t.Errorf("load balancers listed %d times, want 0", n)
	}
	if lbs := liveLBs(f.sim); len(lbs) != 0 {
		t.Errorf("load balancers left: %+v", lbs)
	}
}

func lbName(lb gbsim.LoadBalancer) string { return lb.Name }

// TestFindAfterCreateBeforeMapping: a CCM stopped after creating the load
// balancer and before mapping its cloud IP (and recording its ID) leaves
// the cloud IP unmapped, and a load balancer no cloud IP leads to. The
// next sync finds that one load balancer by the one list this rare case
// costs, maps the cloud IP to it and makes no second one.
func TestFindAfterCreateBeforeMapping(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	const name = "web.default." + clusterName
	lb := f.sim.AddLoadBalancer(gbsim.LoadBalancer{Name: name, Nodes: serverIDsOf(f.Nodes),
		Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 30080}, {Protocol: "http", In: 8080, Out: 30081}},
		Healthcheck: gbsim.Healthcheck{Type: "http", Port: 30080, Request: "/healthz"}})
	cip := f.sim.AddCloudIP(gbsim.CloudIP{Name: name})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	if got := onlyLB(t, f.sim); got.ID != lb.ID {
		t.Errorf("the cloud holds load balancer %s, want the one made before, %s", got.ID, lb.ID)
	}
	if cips := named(f.sim.CloudIPs(), name, cipName); len(cips) != 1 || cips[0].ID != cip.ID || cips[0].Target != lb.ID {
		t.Errorf("cloud IPs named %s = %+v, want %s alone, mapped to %s", name, cips, cip.ID, lb.ID)
	}
	if n := f.sim.Stats()[listLBs]; n != 1 {
		t.Errorf("load balancers listed %d times, want 1", n)
	}
	// Mapped now: the next CCM finds it through the cloud IP.
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, brightbox.AnnotationLoadBalancerID) })
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("the sync after the mapping made %d writes, want 0", n)
	}
	if n := f.sim.Stats()[listLBs]; n != 1 {
		t.Errorf("load balancers listed %d times, want still 1", n)
	}
}

// TestFindThroughAllocatedCloudIP: a load balancer whose cloud IP is the
// user's (cloudip-allocations, named as they like) is found through
// that cloud IP; one named as the Service's load balancer but mapped to
// another load balancer is not taken for it.
func TestFindThroughAllocatedCloudIP(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	const name = "fixed.default." + clusterName
	spec := func(name string) gbsim.LoadBalancer {
		return gbsim.LoadBalancer{Name: name, Nodes: serverIDsOf(f.Nodes),
			Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 30080}, {Protocol: "http", In: 8080, Out: 30081}},
			Healthcheck: gbsim.Healthcheck{Type: "http", Port: 30080, Request: "/healthz"}}
	}
	other := f.sim.AddLoadBalancer(spec("other.default." + clusterName))
	f.sim.AddCloudIP(gbsim.CloudIP{Name: name, Target: other.ID}) // a decoy
	lb := f.sim.AddLoadBalancer(spec(name))
	reserved := f.sim.AddCloudIP(gbsim.CloudIP{Name: "reserved", Target: lb.ID})
	group := f.sim.AddServerGroup(gbsim.ServerGroup{Name: name, Servers: serverIDsOf(f.Nodes)})
	f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: name, ServerGroup: group.ID},
		gbsim.FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30080,30081", Description: name})
	svc := f.Service(t, "fixed", map[string]string{brightbox.AnnotationPrefix + "cloudip-allocations": reserved.ID})
	f.EnsureReady(t, svc)
	if id := f.Fresh(t, svc).Annotations[brightbox.AnnotationLoadBalancerID]; id != lb.ID {
		t.Errorf("ID annotation = %q, want %s, the load balancer of the reserved cloud IP", id, lb.ID)
	}
	if lbs := liveLBs(f.sim); len(lbs) != 2 {
		t.Errorf("the cloud holds %d load balancers, want the 2 there were", len(lbs))
	}
	if n := f.sim.Stats()[listLBs]; n != 0 {
		t.Errorf("load balancers listed %d times, want 0", n)
	}
}

// TestFindMalformedAnswer: when the load balancer a cloud IP leads to
// cannot be read (a truncated answer), the sync fails and creates
// nothing: the load balancer may be there.
func TestFindMalformedAnswer(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	svc = f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, brightbox.AnnotationLoadBalancerID) })
	remove := f.sim.Inject(gbsim.Fault{Op: "GET /1.0/load_balancers/{id}", Truncate: true})
	n := f.WritesDuring(func() {
		if _, err := f.Ensure(t, svc); err == nil {
			t.Error("EnsureLoadBalancer succeeded though its load balancer could not be read")
		}
	})
	remove()
	if n != 0 {
		t.Errorf("the failed sync made %d writes, want 0", n)
	}
	f.EnsureReady(t, svc)
	if lbs := liveLBs(f.sim); len(lbs) != 1 {
		t.Errorf("the cloud holds %d load balancers, want 1", len(lbs))
	}
}
