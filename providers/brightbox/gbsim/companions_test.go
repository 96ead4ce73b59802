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
