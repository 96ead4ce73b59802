package brightbox_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

const clusterName = "test-cluster"

// sharedGroup names the server group and firewall policy the load
// balancers share.
const sharedGroup = "ccmkit-lb-nodes." + clusterName

// lbFixture is the provider's load balancers on a simulated Brightbox
// (frameworktest.LBFixture) with two servers, node-b and node-a, and the
// simulator, for what Brightbox holds.
type lbFixture struct {
	*frameworktest.LBFixture
	sim *gbsim.Server
}

// newLBFixture starts a simulator with simOpts and the provider on it,
// with opts.
func newLBFixture(t *testing.T, simOpts gbsim.Options, opts frameworktest.LBOptions) *lbFixture {
	t.Helper()
	sim := gbsim.NewServer(t, simOpts)
	opts.ClusterName = clusterName
	opts.Nodes = []string{"node-b", "node-a"}
	opts.Ports = []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
		{Name: "alt", Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: 30081},
	}
	return &lbFixture{frameworktest.NewLBFixture(t, target(sim), opts), sim}
}

// liveLBs are the load balancers the cloud holds, deleted ones left out.
func liveLBs(sim *gbsim.Server) []gbsim.LoadBalancer {
	return slices.DeleteFunc(sim.LoadBalancers(), func(lb gbsim.LoadBalancer) bool { return lb.Status == gbsim.StatusDeleted })
}

func onlyLB(t *testing.T, sim *gbsim.Server) gbsim.LoadBalancer {
	t.Helper()
	lbs := liveLBs(sim)
	if len(lbs) != 1 {
		t.Fatalf("cloud holds %d load balancers, want 1: %+v", len(lbs), lbs)
	}
	return lbs[0]
}

func named[T any](items []T, name string, nameOf func(T) string) []T {
	return slices.DeleteFunc(slices.Clone(items), func(v T) bool { return nameOf(v) != name })
}

func cipName(c gbsim.CloudIP) string           { return c.Name }
func groupName(g gbsim.ServerGroup) string     { return g.Name }
func policyName(p gbsim.FirewallPolicy) string { return p.Name }
func ruleOf(sim *gbsim.Server, policy string) []gbsim.FirewallRule {
	return slices.DeleteFunc(sim.FirewallRules(), func(r gbsim.FirewallRule) bool { return r.FirewallPolicy != policy })
}

// TestLoadBalancerLifecycle creates a load balancer with its cloud IP, the
// shared server group and firewall policy with its rule, syncs it again
// with nothing changed (no write), follows a node leaving, and deletes
// exactly what it made, twice.
func TestLoadBalancerLifecycle(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{MappingReads: 2}, frameworktest.LBOptions{})
	// Neighbours the CCM must leave alone.
	other := f.sim.AddCloudIP(gbsim.CloudIP{Name: "someone-else"})
	otherGroup := f.sim.AddServerGroup(gbsim.ServerGroup{Name: "web.default.other-cluster"})
	f.sim.AddFirewallPolicy(gbsim.FirewallPolicy{Name: "web.default.other-cluster", ServerGroup: otherGroup.ID})

	svc := f.Service(t, "web", nil)
	status := f.EnsureReady(t, svc)
	const name = "web.default." + clusterName
	// Create chose the cloud IP; the syncs that map it and wait for the
	// mapping read it by ID, and never list the cloud IPs again.
	if n := f.sim.Stats()["GET /1.0/cloud_ips"]; n != 1 {
		t.Errorf("creating the load balancer listed the cloud IPs %d times, want 1", n)
	}

	lb := onlyLB(t, f.sim)
	if lb.Name != name {
		t.Errorf("load balancer name = %q, want the existing CCM's %q", lb.Name, name)
	}
	wantListeners := []gbsim.Listener{{Protocol: "http", In: 80, Out: 30080}, {Protocol: "http", In: 8080, Out: 30081}}
	if diff := cmp.Diff(wantListeners, lb.Listeners, cmpIgnoreTimeout); diff != "" {
		t.Errorf("listeners (-want +got):\n%s", diff)
	}
	if hc := lb.Healthcheck; hc.Type != "http" || hc.Port != 30080 || hc.Request != "/healthz" {
		t.Errorf("health check = %+v, want http on 30080 /healthz", hc)
	}
	servers := serverIDsOf(f.Nodes)
	if diff := cmp.Diff(servers, slices.Sorted(slices.Values(lb.Nodes))); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	cips := named(f.sim.CloudIPs(), name, cipName)
	if len(cips) != 1 || cips[0].Target != lb.ID {
		t.Fatalf("cloud IPs named %q = %+v, want one mapped to %s", name, cips, lb.ID)
	}
	cip := cips[0]
	wantStatus := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
		{IP: cip.PublicIPv4, Hostname: cip.FQDN}, {IP: cip.PublicIPv6, Hostname: cip.FQDN},
	}}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if n := len(named(f.sim.ServerGroups(), name, groupName)) + len(named(f.sim.FirewallPolicies(), name, policyName)); n != 0 {
		t.Errorf("%d server groups and firewall policies named %q, want none: the load balancers share theirs", n, name)
	}
	groups := named(f.sim.ServerGroups(), sharedGroup, groupName)
	if len(groups) != 1 || !slices.Equal(servers, slices.Sorted(slices.Values(groups[0].Servers))) {
		t.Fatalf("server groups named %q = %+v, want one holding %v", sharedGroup, groups, servers)
	}
	policies := named(f.sim.FirewallPolicies(), sharedGroup, policyName)
	if len(policies) != 1 || policies[0].ServerGroup != groups[0].ID {
		t.Fatalf("firewall policies named %q = %+v, want one on %s", sharedGroup, policies, groups[0].ID)
	}
	rules := ruleOf(f.sim, policies[0].ID)
	if len(rules) != 1 || rules[0].Protocol != "tcp" || rules[0].Source != "10.0.0.0/8" || rules[0].DestinationPort != "30080,30081" || rules[0].Description != name {
		t.Errorf("firewall rules = %+v, want the existing CCM's one, described with the load balancer's name: tcp from 10.0.0.0/8 to 30080,30081", rules)
	}
	if id := f.Fresh(t, svc).Annotations[brightbox.AnnotationLoadBalancerID]; id != lb.ID {
		t.Errorf("ID annotation = %q, want %s", id, lb.ID)
	}

	// Nothing changed: no write, and no read of the shared server group
	// (which lists every node) or firewall policy: the driver knows them
	// (lb_shared.go).
	var again *corev1.LoadBalancerStatus
	before := f.sim.Stats()
	if n := f.WritesDuring(func() {
		var err error
		if again, err = f.Ensure(t, svc); err != nil {
			t.Fatalf("second EnsureLoadBalancer: %v", err)
		}
	}); n != 0 {
		t.Errorf("a sync with nothing changed made %d writes, want 0", n)
	}
	after := f.sim.Stats()
	for _, op := range []string{"GET /1.0/server_groups", "GET /1.0/server_groups/{id}", "GET /1.0/firewall_policies", "GET /1.0/firewall_policies/{id}"} {
		if n := after[op] - before[op]; n != 0 {
			t.Errorf("a sync with nothing changed made %d calls %s, want 0", n, op)
		}
	}
	if diff := cmp.Diff(status, again); diff != "" {
		t.Errorf("the second sync changed the status (-first +second):\n%s", diff)
	}

	// A node leaves: the load balancer and the server group follow.
	if err := f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes[:1]); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	left := serverIDsOf(f.Nodes[:1])
	if got := onlyLB(t, f.sim).Nodes; !slices.Equal(left, got) {
		t.Errorf("after a node left, load balancer nodes = %v, want %v", got, left)
	}
	if got := named(f.sim.ServerGroups(), sharedGroup, groupName)[0].Servers; !slices.Equal(left, got) {
		t.Errorf("after a node left, server group = %v, want %v", got, left)
	}

	f.DeleteDone(t, svc)
	if lbs := liveLBs(f.sim); len(lbs) != 0 {
		t.Errorf("load balancers after delete: %+v", lbs)
	}
	state := f.sim.State()
	if got := named(state.CloudIPs, name, cipName); len(got) != 0 {
		t.Errorf("cloud IPs left: %+v", got)
	}
	if got := named(state.ServerGroups, sharedGroup, groupName); len(got) != 0 {
		t.Errorf("server groups left after the last load balancer went: %+v", got)
	}
	if got := named(state.FirewallPolicies, sharedGroup, policyName); len(got) != 0 {
		t.Errorf("firewall policies left after the last load balancer went: %+v", got)
	}
	if len(named(state.CloudIPs, other.Name, cipName)) != 1 || len(named(state.ServerGroups, otherGroup.Name, groupName)) != 1 ||
		len(named(state.FirewallPolicies, otherGroup.Name, policyName)) != 1 {
		t.Errorf("the delete touched another's objects: %+v", state)
	}
	if n := f.WritesDuring(func() { f.DeleteDone(t, svc) }); n != 0 {
		t.Errorf("deleting again made %d writes, want 0", n)
	}
}

var cmpIgnoreTimeout = cmp.Transformer("noTimeout", func(l gbsim.Listener) gbsim.Listener { l.Timeout = 0; return l })

func serverIDsOf(nodes []*corev1.Node) []string {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, strings.TrimPrefix(n.Spec.ProviderID, "brightbox://"))
	}
	slices.Sort(ids)
	return ids
}

// TestLoadBalancerLocalTraffic: with externalTrafficPolicy Local the load
// balancer checks the healthCheckNodePort, which the firewall opens too,
// and PROXY protocol makes the status ipMode Proxy.
func TestLoadBalancerLocalTraffic(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svc := f.Service(t, "local", map[string]string{brightbox.AnnotationPrefix + "listener-proxy-protocol": "v2"}, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	status := f.EnsureReady(t, svc)
	lb := onlyLB(t, f.sim)
	if hc := lb.Healthcheck; hc.Type != "http" || hc.Port != 32100 || hc.Request != "/healthz" {
		t.Errorf("health check = %+v, want http on the healthCheckNodePort 32100 /healthz", hc)
	}
	for _, l := range lb.Listeners {
		if l.ProxyProtocol != "v2" {
			t.Errorf("listener %+v: proxy protocol %q, want v2", l, l.ProxyProtocol)
		}
	}
	policy := named(f.sim.FirewallPolicies(), sharedGroup, policyName)[0]
	if rules := ruleOf(f.sim, policy.ID); len(rules) != 1 || rules[0].DestinationPort != "30080,30081,32100" {
		t.Errorf("firewall rules = %+v, want the node ports and the healthCheckNodePort", rules)
	}
	for _, in := range status.Ingress {
		if in.IPMode == nil || *in.IPMode != corev1.LoadBalancerIPModeProxy {
			t.Errorf("ingress %+v: want ipMode Proxy", in)
		}
	}
}

// TestLoadBalancerAllocatedCloudIP: the cloud IP cloudip-allocations names
// is mapped instead of a new one, and a delete unmaps it but keeps it.
func TestLoadBalancerAllocatedCloudIP(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	reserved := f.sim.AddCloudIP(gbsim.CloudIP{Name: "reserved"})
	svc := f.Service(t, "fixed", map[string]string{brightbox.AnnotationPrefix + "cloudip-allocations": reserved.ID})
	status := f.EnsureReady(t, svc)
	lb := onlyLB(t, f.sim)
	if len(f.sim.CloudIPs()) != 1 {
		t.Errorf("cloud IPs = %+v, want only the reserved one", f.sim.CloudIPs())
	}
	if got := f.sim.CloudIPs()[0]; got.Target != lb.ID {
		t.Errorf("reserved cloud IP is mapped to %q, want %s", got.Target, lb.ID)
	}
	if len(status.Ingress) == 0 || status.Ingress[0].IP != reserved.PublicIPv4 {
		t.Errorf("status = %+v, want the reserved cloud IP's address", status)
	}
	f.DeleteDone(t, svc)
	cips := f.sim.CloudIPs()
	if len(cips) != 1 || cips[0].ID != reserved.ID || cips[0].Target != "" {
		t.Errorf("after delete, cloud IPs = %+v, want the reserved one, unmapped", cips)
	}
}

// TestLoadBalancerInvalidService: what a Brightbox load balancer cannot
// serve gets a Warning Event naming the field, and nothing is written.
func TestLoadBalancerInvalidService(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	i := 0
	for field, mutate := range map[string]func(*corev1.Service){
		"spec.ports[1].protocol": func(s *corev1.Service) { s.Spec.Ports[1].Protocol = corev1.ProtocolUDP },
		"spec.sessionAffinity":   func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP },
		"spec.loadBalancerIP":    func(s *corev1.Service) { s.Spec.LoadBalancerIP = "109.107.35.1" },
		"spec.loadBalancerSourceRanges": func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
		},
		brightbox.AnnotationPrefix + "ssl-ports": func(s *corev1.Service) {
			s.Annotations = map[string]string{brightbox.AnnotationPrefix + "ssl-ports": "8080"}
		},
	} {
		i++
		t.Run(field, func(t *testing.T) {
			svc := f.Service(t, fmt.Sprintf("bad-%d", i), nil, mutate)
			f.Drain()
			if n := f.WritesDuring(func() {
				if _, err := f.Ensure(t, svc); err == nil {
					t.Error("EnsureLoadBalancer succeeded")
				}
			}); n != 0 {
				t.Errorf("EnsureLoadBalancer made %d writes, want 0", n)
			}
			events := strings.Join(f.Drain(), "\n")
			if !strings.Contains(events, "Warning") || !strings.Contains(events, field) {
				t.Errorf("want a Warning Event naming %s; events:\n%s", field, events)
			}
		})
	}
	if lbs := liveLBs(f.sim); len(lbs) != 0 || len(f.sim.CloudIPs()) != 0 {
		t.Errorf("the cloud holds load balancers %+v, cloud IPs %+v", lbs, f.sim.CloudIPs())
	}
}

// TestLoadBalancerACMEPending: while a certificate domain is not valid the
// sync is retried, with the domain's status and the address to point it
// at in the error (the service controller's Event); once valid, it
// succeeds.
func TestLoadBalancerACMEPending(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{ProvisioningReads: 1000}, frameworktest.LBOptions{})
	svc := f.Service(t, "tls", map[string]string{brightbox.AnnotationPrefix + "ssl-domains": "www.example.com"}, func(s *corev1.Service) {
		s.Spec.Ports[1].Port = 443
	})
	var err error
	for range 4 {
		if _, err = f.Ensure(t, svc); err != nil && strings.Contains(err.Error(), "www.example.com") {
			break
		}
		if lbs := liveLBs(f.sim); len(lbs) == 1 && lbs[0].Status != gbsim.StatusActive {
			f.sim.SetLoadBalancerStatus(lbs[0].ID, gbsim.StatusActive)
		}
	}
	lb := onlyLB(t, f.sim)
	cip := named(f.sim.CloudIPs(), "tls.default."+clusterName, cipName)[0]
	if !frameworktest.IsRetry(err) || !strings.Contains(err.Error(), "www.example.com is pending") || !strings.Contains(err.Error(), cip.PublicIPv4) {
		t.Fatalf("EnsureLoadBalancer with a pending domain: %v; want a retry naming the domain, its status and the address", err)
	}
	wantDomains := []string{cip.FQDN, "www.example.com"}
	if cip.ReverseDNS != "" {
		wantDomains = append(wantDomains, cip.ReverseDNS)
	}
	var got []string
	for _, d := range lb.Domains {
		got = append(got, d.Identifier)
	}
	if !sameStrings(got, wantDomains) {
		t.Errorf("ACME domains = %v, want %v (the existing CCM's: ssl-domains and the cloud IP's names)", got, wantDomains)
	}
	for _, l := range lb.Listeners {
		if l.In == 443 && l.Protocol != "https" || l.In == 80 && l.Protocol != "http" {
			t.Errorf("listener %+v: want https on 443, http on 80", l)
		}
	}
	if !lb.HTTPSRedirect {
		t.Error("https_redirect is off; the existing CCM turns it on with an https listener")
	}
	// A domain Let's Encrypt refused is the user's to fix: an error naming
	// it, its status and the address.
	f.sim.SetACMEDomainStatus(lb.ID, "www.example.com", gbsim.ACMEInvalid, "no A record")
	_, err = f.Ensure(t, svc)
	if err == nil || frameworktest.IsRetry(err) || !strings.Contains(err.Error(), "www.example.com is invalid (no A record)") || !strings.Contains(err.Error(), cip.PublicIPv4) {
		t.Fatalf("EnsureLoadBalancer with a refused domain: %v; want an error naming the domain, its status and the address", err)
	}
	for _, d := range lb.Domains {
		f.sim.SetACMEDomainStatus(lb.ID, d.Identifier, gbsim.ACMEValid, "")
	}
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("the sync after the domains validated made %d writes, want 0", n)
	}
}

func sameStrings(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

// TestLoadBalancerMalformedAnswers: an unknown enum value or a truncated
// JSON answer is an error, never a panic, and nothing is created twice.
func TestLoadBalancerMalformedAnswers(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{CacheTTL: -1})
	svc := f.Service(t, "odd", nil)
	f.EnsureReady(t, svc)

	remove := f.sim.CorruptStatus("GET /1.0/load_balancers*", 0)
	_, err := f.Ensure(t, svc)
	remove()
	if err == nil {
		t.Error("EnsureLoadBalancer with an unknown load balancer status succeeded")
	}

	// With the cache off, a sync reads the shared firewall policy (in
	// the list of policies) and the shared server group by ID
	// (lb_shared.go).
	for _, op := range []string{"GET /1.0/server_groups/{id}", "GET /1.0/firewall_policies"} {
		remove = f.sim.Inject(gbsim.Fault{Op: op, Truncate: true})
		_, err = f.Ensure(t, svc)
		remove()
		if err == nil {
			t.Errorf("EnsureLoadBalancer with a truncated answer to %s succeeded", op)
		}
	}

	remove = f.sim.CorruptStatus("GET /1.0/cloud_ips", 0)
	err = f.Delete(t, svc)
	remove()
	if err == nil {
		t.Error("EnsureLoadBalancerDeleted with an unknown cloud IP status succeeded")
	}
	f.EnsureReady(t, svc)
	if n := len(liveLBs(f.sim)); n != 1 {
		t.Errorf("cloud holds %d load balancers, want 1", n)
	}
}

// TestLoadBalancerSwitchCloudIP: naming a cloud IP in cloudip-allocations
// for a load balancer that has one the CCM allocated maps the named one
// and deletes the allocated one; the status follows.
func TestLoadBalancerSwitchCloudIP(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svc := f.Service(t, "switch", nil)
	f.EnsureReady(t, svc)
	const name = "switch.default." + clusterName
	allocated := named(f.sim.CloudIPs(), name, cipName)
	if len(allocated) != 1 {
		t.Fatalf("cloud IPs named %s: %+v, want one", name, allocated)
	}
	reserved := f.sim.AddCloudIP(gbsim.CloudIP{Name: "reserved"})
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations[brightbox.AnnotationPrefix+"cloudip-allocations"] = reserved.ID })
	status := f.EnsureReady(t, svc)
	lb := onlyLB(t, f.sim)
	cips := f.sim.CloudIPs()
	if len(cips) != 1 || cips[0].ID != reserved.ID || cips[0].Target != lb.ID {
		t.Errorf("cloud IPs = %+v, want only %s, mapped to %s", cips, reserved.ID, lb.ID)
	}
	if len(status.Ingress) != 2 || status.Ingress[0].IP != reserved.PublicIPv4 || status.Ingress[1].IP != reserved.PublicIPv6 {
		t.Errorf("status = %+v, want the reserved cloud IP's addresses", status)
	}
}
