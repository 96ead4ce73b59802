package gbsim

import (
	"cmp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

var _ simkit.CompanionNamer = (*Cloud)(nil)

// Companions lists what the Brightbox CCM creates beside its load
// balancers, as "<kind>/<id>" with the ID of the load balancer each
// serves ("" for none). Load balancers being deleted serve nothing, as
// LoadBalancers leaves them out (their cloud IPs are unmapped as the
// deletion settles).
//
//   - "cloudip/<id>": a cloud IP mapped, or being mapped, to a load
//     balancer serves it, as the cloud holds it; an unmapped one serves
//     none. One mapped to a server or a server group is no load
//     balancer's and is left out.
//   - "firewallrule/<id>": every rule of a firewall policy but the
//     default. The provider describes a rule with its load balancer's
//     name, so a rule serves the live load balancer so named.
//   - "firewallpolicy/<id>": every firewall policy but the default. A
//     policy applied to a server group serves what that group serves (the
//     cloud's own relation); one applied to none serves the load balancer
//     of its name (the existing CCM names a policy as its load balancer),
//     else that of its first rule serving one (the policy the load
//     balancers share, ccmkit-lb-nodes.<cluster>).
//   - "servergroup/<id>": every server group but the account's default.
//     The cloud ties a group to no load balancer: a group serves the live
//     load balancer of its name (the existing CCM's, one per load
//     balancer), else what the policy applied to it serves (the group the
//     load balancers share serves while one of its policy's rules does).
func (c *Cloud) Companions() map[string]string {
	s := c.Server
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]string{}
	live := map[string]bool{}
	for _, lb := range s.st.lbs.All() {
		if !gone(lb.Status) {
			live[lb.ID] = true
			if _, dup := byName[lb.Name]; !dup {
				byName[lb.Name] = lb.ID
			}
		}
	}
	out := map[string]string{}
	for _, cip := range s.st.cips.All() {
		target := cmp.Or(cip.Target, cip.pending)
		switch {
		case target == "":
			out["cloudip/"+cip.ID] = ""
		case strings.HasPrefix(target, "lba-"):
			if !live[target] {
				target = ""
			}
			out["cloudip/"+cip.ID] = target
		}
	}
	ruled := map[string]string{} // policy ID: the load balancer of its first rule serving one
	for _, r := range s.st.rules.All() {
		if p, ok := s.st.policies.Get(r.FirewallPolicy); !ok || p.Default {
			continue
		}
		lb := byName[r.Description]
		out["firewallrule/"+r.ID] = lb
		if _, seen := ruled[r.FirewallPolicy]; !seen && lb != "" {
			ruled[r.FirewallPolicy] = lb
		}
	}
	unapplied := func(p *FirewallPolicy) string { return cmp.Or(byName[p.Name], ruled[p.ID]) }
	groups := map[string]string{}
	for _, g := range s.st.groups.All() {
		if g.Default {
			continue
		}
		groups[g.ID] = byName[g.Name]
		if p := s.st.policyOf(g.ID); groups[g.ID] == "" && p != nil {
			groups[g.ID] = unapplied(p)
		}
		out["servergroup/"+g.ID] = groups[g.ID]
	}
	for _, p := range s.st.policies.All() {
		if p.Default {
			continue
		}
		lb := unapplied(p)
		if p.ServerGroup != "" {
			lb = groups[p.ServerGroup]
		}
		out["firewallpolicy/"+p.ID] = lb
	}
	return out
}

// CompanionNames gives each companion of Companions its name as the cloud
// holds it: the provider names its cloud IPs as their load balancer, and
// describes its firewall rules so (a rule's name is its description);
// server groups and firewall policies are named as their load balancer
// (the existing CCM's) or ccmkit-lb-nodes.<cluster> (shared).
func (c *Cloud) CompanionNames() map[string]string {
	s := c.Server
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, cip := range s.st.cips.All() {
		out["cloudip/"+cip.ID] = cip.Name
	}
	for _, g := range s.st.groups.All() {
		if !g.Default {
			out["servergroup/"+g.ID] = g.Name
		}
	}
	for _, p := range s.st.policies.All() {
		if !p.Default {
			out["firewallpolicy/"+p.ID] = p.Name
		}
	}
	for _, r := range s.st.rules.All() {
		if p, ok := s.st.policies.Get(r.FirewallPolicy); ok && !p.Default {
			out["firewallrule/"+r.ID] = r.Description
		}
	}
	return out
}
