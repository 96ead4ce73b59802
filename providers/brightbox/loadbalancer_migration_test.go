package brightbox_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestMigrationAdoptsWithoutWrites: a Service with the existing CCM's
// annotations, and the load balancer, cloud IP, server group and firewall
// policy that CCM made for it, are taken over as they are: no write to the
// cloud, the status served, and the delete removes exactly those four.
func TestMigrationAdoptsWithoutWrites(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	const name = "shop.default." + clusterName
	servers := serverIDsOf(f.Nodes)
	ann := map[string]string{
		brightbox.AnnotationPrefix + "policy":                               "round-robin",
		brightbox.AnnotationPrefix + "ssl-domains":                          "www.example.com",
		brightbox.AnnotationPrefix + "listener-idle-timeout":                "60000",
		brightbox.AnnotationPrefix + "healthcheck-healthy-threshold":        "4",
		brightbox.AnnotationPrefix + "healthcheck-unhealthy-threshold":      "2",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "7000",
	}
	svc := f.Service(t, "shop", ann, func(s *corev1.Service) { s.Spec.Ports[1].Port = 443 })

	// What the existing CCM made for it (EnsureLoadBalancer in its
	// load_balancer_cloud.go, load_balancer_firewall.go).
	const cipID = "cip-mig01"
	fqdn, rdns := cipID+".gb1.brightbox.com", "cip-109-107-40-1.gb1.brightbox.com"
	lb := f.sim.AddLoadBalancer(gbsim.LoadBalancer{
		Name: name, Policy: "round-robin", HTTPSRedirect: true, Nodes: servers,
		Listeners: []gbsim.Listener{
			{Protocol: "http", In: 80, Out: 30080, Timeout: 60000},
			{Protocol: "https", In: 443, Out: 30081, Timeout: 60000},
		},
		Healthcheck: gbsim.Healthcheck{Type: "http", Port: 30080, Request: "/healthz", Interval: 7000, ThresholdUp: 4, ThresholdDown: 2},
		Domains: []gbsim.ACMEDomain{
			{Identifier: rdns, Status: gbsim.ACMEValid}, {Identifier: fqdn, Status: gbsim.ACMEValid}, {Identifier: "www.example.com", Status: gbsim.ACMEValid},
		},
	})
	cip := f.sim.AddCloudIP(gbsim.CloudIP{ID: cipID, Name: name, ReverseDNS: rdns, Target: lb.ID})
	group := f.sim.AddServerGroup(gbsim.ServerGroup{Name: name, Servers: servers})
	policy := f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: name, ServerGroup: group.ID},
		gbsim.FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30080,30081", Description: name})
	// Neighbours: another Service's objects, which nothing may touch.
	otherLB := f.sim.AddLoadBalancer(gbsim.LoadBalancer{Name: "other.default." + clusterName, Nodes: servers,
		Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 31000}},
		Healthcheck: gbsim.Healthcheck{Type: "http", Port: 31000, Request: "/healthz"}})
	otherCIP := f.sim.AddCloudIP(gbsim.CloudIP{Name: "other.default." + clusterName, Target: otherLB.ID})
	before := f.sim.State()

	var status *corev1.LoadBalancerStatus
	if n := f.WritesDuring(func() { status = f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("adopting the existing CCM's load balancer made %d writes, want 0", n)
	}
	if diff := cmp.Diff(before, f.sim.State(), cmpopts.IgnoreUnexported(gbsim.CloudIP{})); diff != "" {
		t.Errorf("the cloud changed on adoption (-before +after):\n%s", diff)
	}
	want := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
		{IP: cip.PublicIPv4, Hostname: fqdn}, {IP: cip.PublicIPv6, Hostname: fqdn},
	}}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if id := f.Fresh(t, svc).Annotations[brightbox.AnnotationLoadBalancerID]; id != lb.ID {
		t.Errorf("ID annotation = %q, want the adopted %s", id, lb.ID)
	}

	f.DeleteDone(t, svc)
	after := f.sim.State()
	gone := func(what string, found bool) {
		if found {
			t.Errorf("%s is left after the delete", what)
		}
	}
	gone("the load balancer", slices.ContainsFunc(after.LoadBalancers, func(l gbsim.LoadBalancer) bool { return l.ID == lb.ID && l.Status != gbsim.StatusDeleted }))
	gone("the cloud IP", slices.ContainsFunc(after.CloudIPs, func(c gbsim.CloudIP) bool { return c.ID == cip.ID }))
	gone("the server group", slices.ContainsFunc(after.ServerGroups, func(g gbsim.ServerGroup) bool { return g.ID == group.ID }))
	gone("the firewall policy", slices.ContainsFunc(after.FirewallPolicies, func(p gbsim.FirewallPolicy) bool { return p.ID == policy.ID }))
	if !slices.ContainsFunc(after.LoadBalancers, func(l gbsim.LoadBalancer) bool { return l.ID == otherLB.ID && l.Status == gbsim.StatusActive }) ||
		!slices.ContainsFunc(after.CloudIPs, func(c gbsim.CloudIP) bool { return c.ID == otherCIP.ID && c.Target == otherLB.ID }) {
		t.Errorf("the delete touched another Service's load balancer or cloud IP: %+v", after)
	}
	if len(after.ServerGroups) != len(before.ServerGroups)-1 || len(after.FirewallPolicies) != len(before.FirewallPolicies)-1 {
		t.Errorf("the delete removed more than one server group and one firewall policy: before %+v, after %+v", before, after)
	}
}
