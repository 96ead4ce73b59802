package rancher

import (
	"cmp"
	"slices"

	rancher "github.com/rancher/go-rancher/v2"
)

// launchChanges names what differs between the load balancer's
// launchConfig and the desired one: the ports (as a set), when the
// Service names one, the image, and the global label. Any change needs
// Cattle's upgrade.
func launchChanges(have *rancher.LaunchConfig, want *desiredLB) []string {
	var changes []string
	var ports []string
	var image string
	if have != nil {
		ports, image = have.Ports, have.ImageUuid
	}
	if !sameSet(ports, want.ports) {
		changes = append(changes, "ports")
	}
	if want.image != "" && image != want.image {
		changes = append(changes, "image")
	}
	if isGlobal(have) != want.global {
		changes = append(changes, "global")
	}
	return changes
}

// serviceUpdates is the PUT that brings the load-balancer service to
// want with lbConfig cfg: lbConfig when it differs, scale when the
// Service sets one other than Cattle's (1 when it shows none); nil when nothing differs. changes
// names what it changes.
func serviceUpdates(have *rancher.LoadBalancerService, want *desiredLB, cfg *rancher.LbConfig) (updates map[string]any, changes []string) {
	if changes = lbConfigChanges(have.LbConfig, cfg); len(changes) > 0 {
		updates = map[string]any{"lbConfig": cfg}
	}
	if want.scale != 0 && !want.global && cmp.Or(have.Scale, 1) != want.scale {
		if updates == nil {
			updates = map[string]any{}
		}
		updates["scale"] = want.scale
		changes = append(changes, "scale")
	}
	return updates, changes
}

// lbConfigChanges names what differs between the load balancer's lbConfig
// and the desired one (lbConfig(want, backendID)). Port rules are compared
// by what the CCM sets (ports, protocol, serviceId) as a set: Cattle fills
// the others (priority) and lists them in its own order.
func lbConfigChanges(have, want *rancher.LbConfig) []string {
	if have == nil {
		have = &rancher.LbConfig{}
	}
	var changes []string
	add := func(name string, same bool) {
		if !same {
			changes = append(changes, name)
		}
	}
	add("port rules", slices.Equal(ruleKeys(have.PortRules), ruleKeys(want.PortRules)))
	add("default certificate", have.DefaultCertificateId == want.DefaultCertificateId)
	add("certificates", sameSet(have.CertificateIds, want.CertificateIds))
	add("stickiness", sameStickiness(have.StickinessPolicy, want.StickinessPolicy))
	return changes
}

// ruleKey is what the CCM sets in a port rule.
type ruleKey struct {
	source, target  int64
	protocol, svcID string
}

func ruleKeys(rules []rancher.PortRule) []ruleKey {
	rules = slices.Clone(rules)
	sortRules(rules)
	out := make([]ruleKey, len(rules))
	for i, r := range rules {
		out[i] = ruleKey{r.SourcePort, r.TargetPort, r.Protocol, r.ServiceId}
	}
	return slices.Compact(out)
}

// sameStickiness compares the cookie and its mode.
func sameStickiness(have, want *rancher.LoadBalancerCookieStickinessPolicy) bool {
	if have == nil || want == nil {
		return (have == nil || have.Cookie == "") == (want == nil)
	}
	return have.Cookie == want.Cookie && have.Mode == want.Mode
}

// ruleServiceIDs are the services the port rules send traffic to, sorted.
func ruleServiceIDs(c *rancher.LbConfig) []string {
	if c == nil {
		return nil
	}
	var ids []string
	for _, r := range c.PortRules {
		ids = append(ids, r.ServiceId)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
