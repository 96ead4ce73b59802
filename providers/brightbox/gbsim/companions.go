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
//   - "servergroup/<id>": every server group but the account's default.
//     The cloud ties a group to no load balancer; the provider names the
//     group as the load balancer (<service>.<namespace>.<cluster>), so a
//     group serves the live load balancer of its name.
//   - "firewallpolicy/<id>": every firewall policy but the default. A
//     policy applied to a server group serves what that group serves (the
//     cloud's own relation); one applied to none goes by its name, which
//     the provider makes the load balancer's too.
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
	groups := map[string]string{}
	for _, g := range s.st.groups.All() {
		if !g.Default {
			groups[g.ID] = byName[g.Name]
			out["servergroup/"+g.ID] = groups[g.ID]
		}
	}
	for _, p := range s.st.policies.All() {
		if p.Default {
			continue
		}
		lb := byName[p.Name]
		if p.ServerGroup != "" {
			lb = groups[p.ServerGroup]
		}
		out["firewallpolicy/"+p.ID] = lb
	}
	return out
}

// CompanionNames gives each companion of Companions its name as the cloud
// holds it: the provider names its cloud IPs, server groups and firewall
// policies as their load balancer.
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
	return out
}
