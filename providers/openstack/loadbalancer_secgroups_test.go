package openstack_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

const manageSGs = "manage-security-groups = true\n"

// sgByName returns the simulator's security group named name, nil if none.
func sgByName(st openstacksim.Snapshot, name string) *openstacksim.SecurityGroup {
	for i, g := range st.SecurityGroups {
		if g.Name == name {
			return &st.SecurityGroups[i]
		}
	}
	return nil
}

// ruleKey renders a rule as "direction ethertype proto/port from prefix".
func ruleKey(r openstacksim.SecurityGroupRule) string {
	s := r.Direction + " " + r.EtherType
	if r.Protocol != nil {
		s += " " + *r.Protocol
	}
	if r.PortRangeMin != nil {
		s += "/" + strconv.Itoa(*r.PortRangeMin)
	}
	if r.RemoteIPPrefix != nil {
		s += " from " + *r.RemoteIPPrefix
	}
	return s
}

// ruleSet is a group's rules, rendered by ruleKey and sorted.
func ruleSet(g *openstacksim.SecurityGroup) []string {
	var out []string
	for _, r := range g.Rules {
		out = append(out, ruleKey(r))
	}
	slices.Sort(out)
	return out
}

// ruleIDs maps a group's rules, rendered by ruleKey, to their IDs.
func ruleIDs(g *openstacksim.SecurityGroup) map[string]string {
	out := map[string]string{}
	for _, r := range g.Rules {
		out[ruleKey(r)] = r.ID
	}
	return out
}

// nodePortGroups returns each node's port security groups, by node name.
func (f *lbFixture) nodePortGroups(t *testing.T) map[string][]string {
	t.Helper()
	st := f.sim.State()
	servers := map[string]string{}
	for _, s := range st.Servers {
		servers[s.ID] = s.Name
	}
	out := map[string][]string{}
	for _, p := range st.Ports {
		if name, ok := servers[p.DeviceID]; ok {
			out[name] = p.SecurityGroups
		}
	}
	return out
}

func memberCIDR(t *testing.T, st openstacksim.Snapshot) string {
	t.Helper()
	for _, s := range st.Subnets {
		if s.ID == st.Defaults.SubnetID {
			return s.CIDR
		}
	}
	t.Fatal("no default subnet")
	return ""
}

// TestSecurityGroupLifecycle: the group OCCM makes (name, description,
// one ingress rule per node port from the member subnet, no egress), on
// every node's port next to its other groups; a no-op sync writes
// nothing; delete takes it off the ports and deletes it.
func TestSecurityGroupLifecycle(t *testing.T) {
	f := newLBFixture(t, manageSGs, nil)
	svc := f.Service(t, "web", nil, withDNS)
	f.EnsureReady(t, svc)

	st := f.sim.State()
	name := "lb-sg-uid-web-default-web"
	sg := sgByName(st, name)
	if sg == nil {
		t.Fatalf("no security group %s in %+v", name, st.SecurityGroups)
	}
	if want := "Security Group for default/web Service LoadBalancer in cluster " + lbCluster; sg.Description != want {
		t.Errorf("description = %q, want %q", sg.Description, want)
	}
	cidr := memberCIDR(t, st)
	want := []string{"ingress IPv4 tcp/30080 from " + cidr, "ingress IPv4 udp/30053 from " + cidr}
	slices.Sort(want)
	if diff := cmp.Diff(want, ruleSet(sg)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	def := st.Defaults.SecurityGroupID
	for node, groups := range f.nodePortGroups(t) {
		if !slices.Equal(groups, []string{def, sg.ID}) {
			t.Errorf("port of %s has groups %v, want [default %s]", node, groups, sg.ID)
		}
	}

	mark := f.mark()
	if _, err := f.Ensure(t, svc); err != nil {
		t.Fatal(err)
	}
	reads, writes := f.calls(mark)
	t.Logf("no-op sync: %d reads, %d writes", reads, writes)
	if got := f.writes(mark); writes != 0 {
		t.Errorf("no-op sync wrote %v", got)
	}
	sgReads := 0
	for _, r := range f.sim.Requests()[mark:] {
		if strings.Contains(r.Path, "/security-group") || strings.Contains(r.Path, "/ports") {
			sgReads++
		}
	}
	if sgReads > 3 {
		t.Errorf("no-op sync: %d security group and port reads, want at most 3 (group, rules, ports)", sgReads)
	}

	f.DeleteDone(t, svc)
	st = f.sim.State()
	if g := sgByName(st, name); g != nil {
		t.Errorf("security group left after delete: %+v", g)
	}
	for node, groups := range f.nodePortGroups(t) {
		if !slices.Equal(groups, []string{def}) {
			t.Errorf("port of %s has groups %v after delete, want only the default", node, groups)
		}
	}
}

// TestSecurityGroupNodes: the group follows the member nodes: a node that
// joins gets it, one that leaves loses it (its other groups stay).
func TestSecurityGroupNodes(t *testing.T) {
	f := newLBFixture(t, manageSGs, nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	sgID := sgByName(f.sim.State(), "lb-sg-uid-web-default-web").ID
	def := f.sim.Defaults().SecurityGroupID

	f.addNode("node-c")
	left := f.Nodes[0]
	f.Nodes = f.Nodes[1:]
	for range 30 {
		err := f.Update(t, svc)
		if err == nil {
			break
		}
		if !frameworktest.IsRetry(err) {
			t.Fatalf("UpdateLoadBalancer: %v", err)
		}
	}
	groups := f.nodePortGroups(t)
	want := map[string][]string{left.Name: {def}, "node-b": {def, sgID}, "node-c": {def, sgID}}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("port groups (-want +got):\n%s", diff)
	}
	if lb := f.OnlyLoadBalancer(t); !slices.Equal(lb.Members, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v", lb.Members)
	}
}

// TestSecurityGroupPortChange: renumbering a node port replaces its rule
// only; externalTrafficPolicy Local adds the health check node port.
func TestSecurityGroupPortChange(t *testing.T) {
	f := newLBFixture(t, manageSGs, nil)
	svc := f.Service(t, "web", nil, withDNS)
	f.EnsureReady(t, svc)
	name := "lb-sg-uid-web-default-web"
	before := ruleIDs(sgByName(f.sim.State(), name))

	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Spec.Ports[0].NodePort = 30081
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	})
	f.EnsureReady(t, svc)
	st := f.sim.State()
	cidr := memberCIDR(t, st)
	after := ruleIDs(sgByName(st, name))
	want := []string{"ingress IPv4 tcp/30081 from " + cidr, "ingress IPv4 tcp/32000 from " + cidr, "ingress IPv4 udp/30053 from " + cidr}
	var got []string
	for k := range after {
		got = append(got, k)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	udp := "ingress IPv4 udp/30053 from " + cidr
	if after[udp] != before[udp] {
		t.Errorf("the unchanged UDP rule was replaced: %s -> %s", before[udp], after[udp])
	}
}

// TestSecurityGroupOVN: with the ovn provider, which keeps the clients'
// addresses, node ports open to loadBalancerSourceRanges; the health check
// node port stays open to the member subnet only.
func TestSecurityGroupOVN(t *testing.T) {
	f := newLBFixture(t, manageSGs+"lb-provider = ovn\n", nil)
	svc := f.Service(t, "web", nil, func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24", "198.51.100.0/24"}
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	})
	f.EnsureReady(t, svc)
	st := f.sim.State()
	want := []string{"ingress IPv4 tcp/30080 from 192.0.2.0/24", "ingress IPv4 tcp/30080 from 198.51.100.0/24", "ingress IPv4 tcp/32000 from " + memberCIDR(t, st)}
	if diff := cmp.Diff(want, ruleSet(sgByName(st, "lb-sg-uid-web-default-web"))); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

// TestSecurityGroupOff: without manage-security-groups no security group
// call is made and no port is touched.
func TestSecurityGroupOff(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)
	mark := f.mark()
	f.EnsureReady(t, svc)
	f.DeleteDone(t, svc)
	for _, r := range f.sim.Requests()[mark:] {
		if strings.Contains(r.Path, "/security-group") || r.Method == http.MethodPut && strings.Contains(r.Path, "/ports/") {
			t.Errorf("request %s %s without manage-security-groups", r.Method, r.Path)
		}
	}
}
