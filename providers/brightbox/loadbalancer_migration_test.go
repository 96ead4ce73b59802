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

// TestMigrationAdoptsAndMovesToSharedGroup: a Service with the existing
// CCM's annotations, and the load balancer, cloud IP, server group and
// firewall policy that CCM made for it. The load balancer and the cloud
// IP are taken over as they are (not written, found without listing the
// load balancers) and the status served; the load balancer's nodes move
// to the shared server group, its rule to the shared policy, and only
// then its own policy and group go, so that its node ports stay open
// throughout. The delete removes the load balancer, its cloud IP and the
// shared group and policy (it was the last), and nothing of another
// Service's.
func TestMigrationAdoptsAndMovesToSharedGroup(t *testing.T) {
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
	const otherName = "other.default." + clusterName
	otherLB := f.sim.AddLoadBalancer(gbsim.LoadBalancer{Name: otherName, Nodes: servers,
		Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 31000}},
		Healthcheck: gbsim.Healthcheck{Type: "http", Port: 31000, Request: "/healthz"}})
	otherCIP := f.sim.AddCloudIP(gbsim.CloudIP{Name: otherName, Target: otherLB.ID})
	otherGroup := f.sim.AddServerGroup(gbsim.ServerGroup{Name: otherName, Servers: servers})
	otherPolicy := f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: otherName, ServerGroup: otherGroup.ID},
		gbsim.FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "31000", Description: otherName})
	before := f.sim.State()
	start := len(f.sim.Requests())

	status := f.EnsureReady(t, svc)
	after := f.sim.State()
	// The load balancer and its cloud IP: as they were.
	if diff := cmp.Diff(before.LoadBalancers, after.LoadBalancers); diff != "" {
		t.Errorf("the load balancers changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.CloudIPs, after.CloudIPs, cmpopts.IgnoreUnexported(gbsim.CloudIP{})); diff != "" {
		t.Errorf("the cloud IPs changed (-before +after):\n%s", diff)
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
	if n := f.sim.Stats()[listLBs]; n != 0 {
		t.Errorf("load balancers listed %d times, want 0", n)
	}
	// The firewall: moved to the shared group and policy.
	shared := onlyNamed(t, after.ServerGroups, sharedGroup, groupName)
	if !slices.Equal(servers, slices.Sorted(slices.Values(shared.Servers))) {
		t.Errorf("shared server group = %v, want %v", shared.Servers, servers)
	}
	sharedPolicy := onlyNamed(t, after.FirewallPolicies, sharedGroup, policyName)
	if rules := ruleOf(f.sim, sharedPolicy.ID); sharedPolicy.ServerGroup != shared.ID || len(rules) != 1 ||
		rules[0].Description != name || rules[0].DestinationPort != "30080,30081" || rules[0].Source != "10.0.0.0/8" {
		t.Errorf("shared firewall policy %+v with rules %+v; want it on %s with the load balancer's rule", sharedPolicy, rules, shared.ID)
	}
	for _, g := range after.ServerGroups {
		if g.ID == group.ID {
			t.Errorf("the load balancer's own server group %s is left", g.ID)
		}
	}
	for _, p := range after.FirewallPolicies {
		if p.ID == policy.ID {
			t.Errorf("the load balancer's own firewall policy %s is left", p.ID)
		}
	}
	// Without an outage: the rule in the shared policy, applied to the
	// group holding the nodes, before the load balancer's own policy went.
	order := map[string]int{}
	for i, r := range f.sim.Requests()[start:] {
		if _, seen := order[r.Op]; !seen {
			order[r.Op] = i
		}
	}
	for _, op := range []string{"POST /1.0/server_groups/{id}/add_servers", "POST /1.0/firewall_policies/{id}/apply_to", "POST /1.0/firewall_rules"} {
		if i, ok := order[op]; !ok || i > order["DELETE /1.0/firewall_policies/{id}"] {
			t.Errorf("%s came after the load balancer's own policy was deleted (or never): %v", op, order)
		}
	}
	// Once moved, a sync writes nothing.
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("the sync after the move made %d writes, want 0", n)
	}

	f.DeleteDone(t, svc)
	left := f.sim.State()
	gone := func(what string, found bool) {
		if found {
			t.Errorf("%s is left after the delete", what)
		}
	}
	gone("the load balancer", slices.ContainsFunc(left.LoadBalancers, func(l gbsim.LoadBalancer) bool { return l.ID == lb.ID && l.Status != gbsim.StatusDeleted }))
	gone("the cloud IP", slices.ContainsFunc(left.CloudIPs, func(c gbsim.CloudIP) bool { return c.ID == cip.ID }))
	gone("the shared server group", len(named(left.ServerGroups, sharedGroup, groupName)) > 0)
	gone("the shared firewall policy", len(named(left.FirewallPolicies, sharedGroup, policyName)) > 0)
	if !slices.ContainsFunc(left.LoadBalancers, func(l gbsim.LoadBalancer) bool { return l.ID == otherLB.ID && l.Status == gbsim.StatusActive }) ||
		!slices.ContainsFunc(left.CloudIPs, func(c gbsim.CloudIP) bool { return c.ID == otherCIP.ID && c.Target == otherLB.ID }) ||
		!slices.ContainsFunc(left.ServerGroups, func(g gbsim.ServerGroup) bool { return g.ID == otherGroup.ID && len(g.Servers) == len(servers) }) ||
		!slices.ContainsFunc(left.FirewallPolicies, func(p gbsim.FirewallPolicy) bool { return p.ID == otherPolicy.ID && p.ServerGroup == otherGroup.ID }) {
		t.Errorf("the migration or the delete touched another Service's objects: %+v", left)
	}
}

// TestMigrationDeleteBeforeMove: a Service of the existing CCM deleted
// before any sync moved it: its own group and policy go with it, and the
// shared ones are not made.
func TestMigrationDeleteBeforeMove(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	const name = "old.default." + clusterName
	servers := serverIDsOf(f.Nodes)
	lb := f.sim.AddLoadBalancer(gbsim.LoadBalancer{Name: name, Nodes: servers,
		Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 30080}, {Protocol: "http", In: 8080, Out: 30081}},
		Healthcheck: gbsim.Healthcheck{Type: "http", Port: 30080, Request: "/healthz"}})
	f.sim.AddCloudIP(gbsim.CloudIP{Name: name, Target: lb.ID})
	group := f.sim.AddServerGroup(gbsim.ServerGroup{Name: name, Servers: servers})
	f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: name, ServerGroup: group.ID},
		gbsim.FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30080,30081", Description: name})
	svc := f.Service(t, "old", nil)
	f.DeleteDone(t, svc)
	checkNoneLeft(t, f.sim)
	if lbs := liveLBs(f.sim); len(lbs) != 0 || len(f.sim.CloudIPs()) != 0 {
		t.Errorf("left: load balancers %+v, cloud IPs %+v", lbs, f.sim.CloudIPs())
	}
}
