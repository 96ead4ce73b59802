package dosim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The firewall sub-resources (openapi specification/resources/firewalls:
// firewalls_assign_droplets, _delete_droplets, _add_tags, _delete_tags,
// _add_rules, _delete_rules) change one part of a firewall and answer 204
// with no body; the firewall is then "waiting" on its droplets as after a
// PUT.

// firewallFor is the firewall a sub-resource request names, nil when
// there is none.
func (s *Server) firewallFor(r *http.Request) *Firewall { return s.st.firewalls[r.PathValue("id")] }

// addFirewallDroplets serves POST /v2/firewalls/{id}/droplets.
func (s *Server) addFirewallDroplets(r *http.Request) (int, any) {
	return s.firewallDropletIDs(r, true)
}

// removeFirewallDroplets serves DELETE /v2/firewalls/{id}/droplets.
func (s *Server) removeFirewallDroplets(r *http.Request) (int, any) {
	return s.firewallDropletIDs(r, false)
}

func (s *Server) firewallDropletIDs(r *http.Request, add bool) (int, any) {
	fw := s.firewallFor(r)
	if fw == nil {
		return notFound()
	}
	var req struct {
		DropletIDs []int `json:"droplet_ids"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if len(req.DropletIDs) == 0 {
		return unprocessable("droplet_ids is required")
	}
	for _, id := range req.DropletIDs {
		if _, ok := s.st.droplets[id]; add && !ok {
			return unprocessable("droplet %d does not exist", id)
		}
	}
	s.changeFirewall(fw, func() { fw.DropletIDs = addOrRemove(fw.DropletIDs, req.DropletIDs, add) })
	return http.StatusNoContent, nil
}

// addFirewallTags serves POST /v2/firewalls/{id}/tags.
func (s *Server) addFirewallTags(r *http.Request) (int, any) { return s.firewallTags(r, true) }

// removeFirewallTags serves DELETE /v2/firewalls/{id}/tags.
func (s *Server) removeFirewallTags(r *http.Request) (int, any) { return s.firewallTags(r, false) }

func (s *Server) firewallTags(r *http.Request, add bool) (int, any) {
	fw := s.firewallFor(r)
	if fw == nil {
		return notFound()
	}
	var req struct {
		Tags []string `json:"tags"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if len(req.Tags) == 0 {
		return unprocessable("tags is required")
	}
	for _, t := range req.Tags {
		if add && !s.st.tags[t] {
			return unprocessable("tag %q does not exist", t)
		}
	}
	s.changeFirewall(fw, func() { fw.Tags = addOrRemove(fw.Tags, req.Tags, add) })
	return http.StatusNoContent, nil
}

// addOrRemove adds the items have lacks, or removes the ones it holds.
func addOrRemove[T comparable](have, items []T, add bool) []T {
	out := slices.Clone(have)
	for _, x := range items {
		has := slices.Contains(out, x)
		switch {
		case add && !has:
			out = append(out, x)
		case !add && has:
			out = slices.DeleteFunc(out, func(y T) bool { return y == x })
		}
	}
	return out
}

// addFirewallRules serves POST /v2/firewalls/{id}/rules.
func (s *Server) addFirewallRules(r *http.Request) (int, any) { return s.firewallRules(r, true) }

// removeFirewallRules serves DELETE /v2/firewalls/{id}/rules: it removes
// the firewall's rules equal to one of the request's, ports compared as
// the API answers them ("all" is "0") and lists as sets.
func (s *Server) removeFirewallRules(r *http.Request) (int, any) { return s.firewallRules(r, false) }

func (s *Server) firewallRules(r *http.Request, add bool) (int, any) {
	fw := s.firewallFor(r)
	if fw == nil {
		return notFound()
	}
	var req struct {
		InboundRules  []InboundRule  `json:"inbound_rules"`
		OutboundRules []OutboundRule `json:"outbound_rules"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if len(req.InboundRules)+len(req.OutboundRules) == 0 {
		return unprocessable("inbound_rules or outbound_rules is required")
	}
	check := firewallRequest{Name: fw.Name, InboundRules: req.InboundRules, OutboundRules: req.OutboundRules}
	if msg := s.validateFirewall(&check); msg != "" {
		return unprocessable("%s", msg)
	}
	var set Firewall
	set.set(&check)
	in, out := ruleKeys(set.InboundRules, inboundKey), ruleKeys(set.OutboundRules, outboundKey)
	s.changeFirewall(fw, func() {
		if add {
			fw.InboundRules = append(fw.InboundRules, set.InboundRules...)
			fw.OutboundRules = append(fw.OutboundRules, set.OutboundRules...)
			return
		}
		fw.InboundRules = slices.DeleteFunc(fw.InboundRules, func(r InboundRule) bool { return slices.Contains(in, inboundKey(r)) })
		fw.OutboundRules = slices.DeleteFunc(fw.OutboundRules, func(r OutboundRule) bool { return slices.Contains(out, outboundKey(r)) })
	})
	return http.StatusNoContent, nil
}

func inboundKey(r InboundRule) string { return ruleKey(r.Protocol, r.PortRange, r.Action, r.Sources) }
func outboundKey(r OutboundRule) string {
	return ruleKey(r.Protocol, r.PortRange, r.Action, r.Destinations)
}

func ruleKeys[R any](rules []R, key func(R) string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = key(r)
	}
	return out
}

// ruleKey is a stored rule in a canonical form: its target lists sorted,
// no action meaning allow.
func ruleKey(proto, ports, action string, t *Targets) string {
	var n Targets
	if t != nil {
		n = Targets{
			Addresses: sorted(t.Addresses), Tags: sorted(t.Tags), DropletIDs: sorted(t.DropletIDs),
			LoadBalancerUIDs: sorted(t.LoadBalancerUIDs), KubernetesIDs: sorted(t.KubernetesIDs),
		}
	}
	b, _ := json.Marshal(n)
	return fmt.Sprintf("%s:%s:%s %s", proto, ports, cmp.Or(action, "allow"), b)
}

func sorted[T cmp.Ordered](v []T) []T {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// listDropletFirewalls serves GET /v2/droplets/{id}/firewalls: the
// firewalls that apply to the droplet, by ID or by one of its tags.
func (s *Server) listDropletFirewalls(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if _, ok := s.st.droplets[id]; err != nil || !ok {
		return notFound()
	}
	return s.firewallList(r, func(fw *Firewall) bool { return slices.Contains(s.firewallDroplets(fw), id) })
}
