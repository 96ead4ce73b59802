package gbsim

import (
	"slices"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/google/go-cmp/cmp"
)

// TestCompanions: the load balancer's cloud IP gives its addresses and
// serves it with the server group and firewall policy named as it; once
// it is deleted, they serve none (the cloud IP unmapped), and a cloud IP
// of a server is never one.
func TestCompanions(t *testing.T) {
	s, c := setup(t, Options{})
	node := s.AddServer(CloudServer{Name: "node"})
	s.AddCloudIP(CloudIP{Name: "node's", Target: node.ID})
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions(node.ID))
	if err != nil {
		t.Fatal(err)
	}
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{Name: ptr(lb.Name)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapCloudIP(ctx(), cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID}); err != nil {
		t.Fatal(err)
	}
	spare, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{Name: ptr("spare")})
	if err != nil {
		t.Fatal(err)
	}
	group, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr(lb.Name)})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := c.CreateFirewallPolicy(ctx(), brightbox.FirewallPolicyOptions{
		Name: ptr("renamed"), FirewallPolicyAttachment: &brightbox.FirewallPolicyAttachment{ServerGroup: group.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()

	wantAddrs := slices.Sorted(slices.Values([]string{cip.PublicIPv4, cip.Fqdn, cip.PublicIPv6, cip.Fqdn}))
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 1 || !cmp.Equal(lbs[0].Addresses, wantAddrs) || cip.Fqdn == "" {
		t.Errorf("LoadBalancers = %+v, want addresses %v", lbs, wantAddrs)
	}
	want := map[string]string{
		"cloudip/" + cip.ID:           lb.ID,
		"cloudip/" + spare.ID:         "",
		"servergroup/" + group.ID:     lb.ID,
		"firewallpolicy/" + policy.ID: lb.ID,
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}
	names := s.Cloud().CompanionNames()
	for c, want := range map[string]string{"cloudip/" + cip.ID: lb.Name, "cloudip/" + spare.ID: "spare", "servergroup/" + group.ID: lb.Name, "firewallpolicy/" + policy.ID: "renamed"} {
		if names[c] != want {
			t.Errorf("CompanionNames[%s] = %q, want %q", c, names[c], want)
		}
	}

	if _, err := c.DestroyLoadBalancer(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	for k := range want {
		want[k] = ""
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions after the load balancer's deletion (-want +got):\n%s", diff)
	}
	if _, err := c.DestroyCloudIP(ctx(), cip.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DestroyFirewallPolicy(ctx(), policy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DestroyServerGroup(ctx(), group.ID); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if diff := cmp.Diff(map[string]string{"cloudip/" + spare.ID: ""}, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions once deleted (-want +got):\n%s", diff)
	}
}

// TestCompanionsShared: a server group and firewall policy the load
// balancers share (named as none of them) serve a load balancer while a
// rule of the policy, described with a live load balancer's name, does;
// each rule serves its own.
func TestCompanionsShared(t *testing.T) {
	s, c := setup(t, Options{})
	node := s.AddServer(CloudServer{Name: "node"})
	var lbs []string
	for _, name := range []string{"a.default.k8s", "b.default.k8s"} {
		opts := lbOptions(node.ID)
		opts.Name = ptr(name)
		lb, err := c.CreateLoadBalancer(ctx(), opts)
		if err != nil {
			t.Fatal(err)
		}
		lbs = append(lbs, lb.ID)
	}
	group := s.AddServerGroup(ServerGroup{Name: "ccmkit-lb-nodes.k8s", Servers: []string{node.ID}})
	policy := s.AddFirewallPolicy(FirewallPolicy{Name: "ccmkit-lb-nodes.k8s", ServerGroup: group.ID},
		FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30080", Description: "a.default.k8s"},
		FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30090", Description: "b.default.k8s"})
	s.Advance()
	var rules []string
	for _, r := range s.FirewallRules() {
		if r.FirewallPolicy == policy.ID {
			rules = append(rules, r.ID)
		}
	}
	want := map[string]string{
		"servergroup/" + group.ID:     lbs[0],
		"firewallpolicy/" + policy.ID: lbs[0],
		"firewallrule/" + rules[0]:    lbs[0],
		"firewallrule/" + rules[1]:    lbs[1],
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}
	if got := s.Cloud().CompanionNames()["firewallrule/"+rules[1]]; got != "b.default.k8s" {
		t.Errorf("CompanionNames of a rule = %q, want its description", got)
	}

	if _, err := c.DestroyLoadBalancer(ctx(), lbs[0]); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	want["servergroup/"+group.ID], want["firewallpolicy/"+policy.ID], want["firewallrule/"+rules[0]] = lbs[1], lbs[1], ""
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions after a's deletion (-want +got):\n%s", diff)
	}
}
