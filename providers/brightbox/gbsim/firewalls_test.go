package gbsim

import (
	"net/http"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

func TestFirewallPolicies(t *testing.T) {
	s, c := setup(t, Options{})
	g, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr("web")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateFirewallPolicy(ctx(), brightbox.FirewallPolicyOptions{Name: ptr("web"),
		FirewallPolicyAttachment: &brightbox.FirewallPolicyAttachment{ServerGroup: g.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if p.ServerGroup == nil || p.ServerGroup.ID != g.ID {
		t.Fatalf("policy's group = %+v", p.ServerGroup)
	}
	if got, _ := c.ServerGroup(ctx(), g.ID); got.FirewallPolicy == nil || got.FirewallPolicy.ID != p.ID {
		t.Errorf("group's policy = %+v", got.FirewallPolicy)
	}
	rule, err := c.CreateFirewallRule(ctx(), brightbox.FirewallRuleOptions{FirewallPolicy: p.ID, Protocol: ptr("tcp"),
		Source: ptr("10.0.0.0/8"), DestinationPort: ptr("31080,31443")})
	if err != nil {
		t.Fatal(err)
	}
	if rule.FirewallPolicy == nil || rule.FirewallPolicy.ID != p.ID || rule.DestinationPort != "31080,31443" {
		t.Fatalf("rule = %+v", rule)
	}
	rule, err = c.UpdateFirewallRule(ctx(), brightbox.FirewallRuleOptions{ID: rule.ID, DestinationPort: ptr("30000-32767")})
	if err != nil || rule.DestinationPort != "30000-32767" || rule.Source != "10.0.0.0/8" {
		t.Fatalf("updated = %+v, %v", rule, err)
	}
	for _, bad := range []brightbox.FirewallRuleOptions{
		{FirewallPolicy: p.ID, Protocol: ptr("tcp")},
		{FirewallPolicy: p.ID, Protocol: ptr("icmp"), Source: ptr("any"), DestinationPort: ptr("80")},
		{FirewallPolicy: p.ID, Protocol: ptr("tcp"), Source: ptr("any"), DestinationPort: ptr("eighty")},
		{FirewallPolicy: "fwp-nope0", Source: ptr("any")},
		{FirewallPolicy: p.ID, Source: ptr("10.0.0.0/33")},
		{FirewallPolicy: p.ID, Source: ptr("srv-nope0")},
		{FirewallPolicy: p.ID, Destination: ptr("everywhere")},
	} {
		_, err := c.CreateFirewallRule(ctx(), bad)
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
	for _, end := range []string{"any", "2a02:1348::/32", "192.0.2.1", g.ID} {
		r, err := c.CreateFirewallRule(ctx(), brightbox.FirewallRuleOptions{FirewallPolicy: p.ID, Source: ptr(end)})
		if err != nil {
			t.Fatalf("source %s: %v", end, err)
		}
		if _, err := c.DestroyFirewallRule(ctx(), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.FirewallPolicy(ctx(), p.ID)
	if err != nil || len(got.Rules) != 1 || got.Rules[0].ID != rule.ID {
		t.Fatalf("policy's rules = %+v, %v", got.Rules, err)
	}

	other, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr("other")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ApplyFirewallPolicy(ctx(), p.ID, brightbox.FirewallPolicyAttachment{ServerGroup: other.ID})
	wantStatus(t, err, http.StatusConflict)
	_, err = c.RemoveFirewallPolicy(ctx(), p.ID, brightbox.FirewallPolicyAttachment{ServerGroup: other.ID})
	wantStatus(t, err, http.StatusConflict)
	if p, err = c.RemoveFirewallPolicy(ctx(), p.ID, brightbox.FirewallPolicyAttachment{ServerGroup: g.ID}); err != nil || p.ServerGroup != nil {
		t.Fatalf("removed = %+v, %v", p, err)
	}
	if p, err = c.ApplyFirewallPolicy(ctx(), p.ID, brightbox.FirewallPolicyAttachment{ServerGroup: other.ID}); err != nil || p.ServerGroup.ID != other.ID {
		t.Fatalf("applied = %+v, %v", p, err)
	}

	if _, err := c.DestroyFirewallPolicy(ctx(), p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.FirewallRule(ctx(), rule.ID)
	wantStatus(t, err, http.StatusNotFound)
	if got, _ := c.ServerGroup(ctx(), other.ID); got.FirewallPolicy != nil {
		t.Errorf("group's policy after deletion = %+v", got.FirewallPolicy)
	}
	_, err = c.DestroyFirewallPolicy(ctx(), "fwp-j3654")
	wantStatus(t, err, http.StatusConflict)
	if n := len(s.FirewallRules()); n != 1 {
		t.Errorf("%d rules left, want the default policy's one", n)
	}
}
