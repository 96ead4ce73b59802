package tritonsim

import (
	"regexp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

var _ simkit.CompanionLister = (*Cloud)(nil)

// Companions lists what the Triton CCM creates beside its Moirai
// appliances (the appliance machine being the load balancer itself), as
// "<kind>/<id>" with the ID of the load balancer each serves ("" for
// none):
//
//   - "fwrule/<id>": the firewall rules that open an appliance's ports.
//     Nothing in FWAPI tells them from a user's rules but the description
//     the provider gives them, k8s-ccm:<cluster>:lb:<machine>, so that
//     picks them; each serves the appliance its rule text targets
//     ("... TO vm <uuid> ..."), the cloud's own relation, or none when
//     that machine is no live load balancer.
//
// CNS-mode Services make no cloud object: their entries are tags on the
// nodes.
func (c *Cloud) Companions() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for _, r := range c.st.rules.All() {
		if lbRuleDescription.MatchString(r.Description) {
			out["fwrule/"+r.ID] = c.st.ruleAppliance(r)
		}
	}
	return out
}

// lbRuleDescription is the description the provider gives an appliance's
// rules.
var lbRuleDescription = regexp.MustCompile(`^k8s-ccm:.*:lb:`)

// ruleAppliance is the live Moirai appliance a rule targets by "vm
// <uuid>" on its TO side, "" for none.
func (st *state) ruleAppliance(r *FirewallRule) string {
	parsed, err := parseFWRule(r.Rule)
	if err != nil {
		return ""
	}
	for _, t := range parsed.to {
		if t.kind != "vm" {
			continue
		}
		if m, ok := st.machines.Get(t.name); ok && m.State != StateDeleted && strings.EqualFold(m.Metadata[MetadataLoadBalancer], "true") {
			return m.ID
		}
	}
	return ""
}
