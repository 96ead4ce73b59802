package brightbox

import (
	"slices"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

// lbChanges names the settings in which the load balancer lb differs from
// the desired spec want; none means no write is needed. The API fills
// defaults and lists in its own order, so both sides are compared
// normalized: listeners by port, nodes and domains as sets, and numbers
// the Service leaves unset (0) not at all, so that the API's defaults, or
// values set by hand, cause no write.
func lbChanges(lb *loadBalancer, want *brightbox.LoadBalancerOptions) []string {
	var changes []string
	add := func(name string, same bool) {
		if !same {
			changes = append(changes, name)
		}
	}
	add("name", want.Name == nil || *want.Name == lb.Name)
	add("policy", want.Policy == 0 || want.Policy == lb.Policy)
	add("listeners", sameListeners(lb.Listeners, want.Listeners))
	add("nodes", sameSet(lb.NodeIDs, lbNodeIDs(want.Nodes)))
	add("health check", want.Healthcheck == nil || sameHealthCheck(&lb.Healthcheck, want.Healthcheck))
	add("domains", want.Domains == nil || sameSet(acmeDomains(lb.Acme), *want.Domains))
	add("https redirect", want.HTTPSRedirect == nil || *want.HTTPSRedirect == lb.HTTPSRedirect)
	return changes
}

// sameListeners compares listeners by port; a desired timeout of 0 (the
// API's default) matches any.
func sameListeners(have, want []brightbox.LoadBalancerListener) bool {
	if len(have) != len(want) {
		return false
	}
	have, want = slices.Clone(have), slices.Clone(want)
	sortListeners(have)
	sortListeners(want)
	for i := range want {
		h, w := have[i], want[i]
		if w.Timeout == 0 {
			h.Timeout = 0
		}
		if h != w {
			return false
		}
	}
	return true
}

// sameHealthCheck compares what the Service decides; timings and
// thresholds it leaves unset (0) match any.
func sameHealthCheck(have, want *brightbox.LoadBalancerHealthcheck) bool {
	h := *have
	keep := func(dst *uint, w uint) {
		if w == 0 {
			*dst = 0
		}
	}
	keep(&h.Interval, want.Interval)
	keep(&h.Timeout, want.Timeout)
	keep(&h.ThresholdUp, want.ThresholdUp)
	keep(&h.ThresholdDown, want.ThresholdDown)
	return h == *want
}

func acmeDomains(acme *brightbox.LoadBalancerAcme) []string {
	if acme == nil {
		return nil
	}
	out := make([]string, 0, len(acme.Domains))
	for _, d := range acme.Domains {
		out = append(out, strings.ToLower(d.Identifier))
	}
	return out
}

func nodeIDs(servers []brightbox.Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.ID
	}
	return out
}

func lbNodeIDs(nodes []brightbox.LoadBalancerNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Node
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// ruleChanges names what differs between the policy's rule and the
// desired one. The ports are compared as a set: the API may reorder them.
func ruleChanges(have *brightbox.FirewallRule, want firewallRule) []string {
	var changes []string
	if have.Protocol != want.Protocol {
		changes = append(changes, "protocol")
	}
	if have.Source != want.Source {
		changes = append(changes, "source")
	}
	if !sameSet(splitPorts(have.DestinationPort), splitPorts(want.DestinationPort)) {
		changes = append(changes, "destination ports")
	}
	if have.Description != want.Description {
		changes = append(changes, "description")
	}
	return changes
}

func splitPorts(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// membership returns the servers to add to a group holding have for it to
// hold exactly want, and those to remove, each in the order given.
func membership(have, want []string) (add, remove []string) {
	in := func(ids []string) map[string]bool {
		m := make(map[string]bool, len(ids))
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	h, w := in(have), in(want)
	for _, id := range want {
		if !h[id] {
			add = append(add, id)
		}
	}
	for _, id := range have {
		if !w[id] {
			remove = append(remove, id)
		}
	}
	return add, remove
}

// without returns ids less drop, in a new slice.
func without(ids, drop []string) []string {
	keep, _ := membership(drop, ids)
	return keep
}
