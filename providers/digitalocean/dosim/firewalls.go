package dosim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Firewall is a cloud firewall as the API serves it.
type Firewall struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Status         string         `json:"status"`
	InboundRules   []InboundRule  `json:"inbound_rules"`
	OutboundRules  []OutboundRule `json:"outbound_rules"`
	DropletIDs     []int          `json:"droplet_ids"`
	Tags           []string       `json:"tags"`
	Created        string         `json:"created_at"`
	PendingChanges []any          `json:"pending_changes"`
}

// InboundRule admits traffic from Sources.
type InboundRule struct {
	Protocol  string   `json:"protocol"`
	PortRange string   `json:"ports,omitempty"`
	Sources   *Targets `json:"sources"`
}

// OutboundRule admits traffic to Destinations.
type OutboundRule struct {
	Protocol     string   `json:"protocol"`
	PortRange    string   `json:"ports,omitempty"`
	Destinations *Targets `json:"destinations"`
}

// Targets are a rule's sources or destinations.
type Targets struct {
	Addresses        []string `json:"addresses,omitempty"`
	Tags             []string `json:"tags,omitempty"`
	DropletIDs       []int    `json:"droplet_ids,omitempty"`
	LoadBalancerUIDs []string `json:"load_balancer_uids,omitempty"`
	KubernetesIDs    []string `json:"kubernetes_ids,omitempty"`
}

type firewallRequest struct {
	Name          string         `json:"name"`
	InboundRules  []InboundRule  `json:"inbound_rules"`
	OutboundRules []OutboundRule `json:"outbound_rules"`
	DropletIDs    []int          `json:"droplet_ids"`
	Tags          []string       `json:"tags"`
}

var validFirewallName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9.\-]{0,254}$`)

func (fw *Firewall) clone() Firewall {
	c := *fw
	c.InboundRules = slices.Clone(fw.InboundRules)
	c.OutboundRules = slices.Clone(fw.OutboundRules)
	c.DropletIDs = slices.Clone(fw.DropletIDs)
	c.Tags = slices.Clone(fw.Tags)
	c.PendingChanges = []any{}
	return c
}

// Firewalls returns the firewalls, oldest first.
func (s *Server) Firewalls() []Firewall {
	return s.State().Firewalls
}

// validateFirewall returns the 422 message for req, "" when it is valid.
// The caller holds s.mu.
func (s *Server) validateFirewall(req *firewallRequest) string {
	if !validFirewallName.MatchString(req.Name) {
		return "name must start with a letter or digit and contain only letters, digits, '.' and '-'"
	}
	for _, id := range req.DropletIDs {
		if _, ok := s.st.droplets[id]; !ok {
			return fmt.Sprintf("droplet %d does not exist", id)
		}
	}
	for _, t := range req.Tags {
		if !s.st.tags[t] {
			return fmt.Sprintf("tag %q does not exist", t)
		}
	}
	for _, in := range req.InboundRules {
		if msg := validateFirewallRule("inbound", in.Protocol, in.PortRange, in.Sources); msg != "" {
			return msg
		}
	}
	for _, out := range req.OutboundRules {
		if msg := validateFirewallRule("outbound", out.Protocol, out.PortRange, out.Destinations); msg != "" {
			return msg
		}
	}
	return ""
}

func validateFirewallRule(dir, proto, ports string, t *Targets) string {
	switch proto {
	case "icmp":
	case "tcp", "udp":
		if !validPorts(ports) {
			return fmt.Sprintf("%s rule: ports %q is not a port, a range like 8000-9000, 0 or all", dir, ports)
		}
	default:
		return fmt.Sprintf("%s rule: protocol %q is not one of tcp, udp, icmp", dir, proto)
	}
	if t == nil || len(t.Addresses)+len(t.Tags)+len(t.DropletIDs)+len(t.LoadBalancerUIDs)+len(t.KubernetesIDs) == 0 {
		return fmt.Sprintf("%s rule: at least one source or destination is required", dir)
	}
	return ""
}

func validPorts(p string) bool {
	if p == "all" || p == "0" {
		return true
	}
	lo, hi, isRange := strings.Cut(p, "-")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 1 || a > 65535 {
		return false
	}
	if !isRange {
		return true
	}
	b, err := strconv.Atoi(hi)
	return err == nil && b >= a && b <= 65535
}

func (s *Server) listFirewalls(r *http.Request) (int, any) {
	fws := make([]Firewall, 0, len(s.st.fwOrder))
	for _, id := range s.st.fwOrder {
		fws = append(fws, s.st.firewalls[id].clone())
	}
	return list(r, "firewalls", fws, s.opts.PerPage)
}

func (s *Server) getFirewall(r *http.Request) (int, any) {
	fw, ok := s.st.firewalls[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	return http.StatusOK, map[string]any{"firewall": fw.clone()}
}

func (s *Server) createFirewall(r *http.Request) (int, any) {
	var req firewallRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if msg := s.validateFirewall(&req); msg != "" {
		return unprocessable("%s", msg)
	}
	st := s.st
	st.fwSeq++
	fw := &Firewall{ID: uuid(4, st.fwSeq), Created: created}
	fw.set(&req)
	st.firewalls[fw.ID] = fw
	st.fwOrder = append(st.fwOrder, fw.ID)
	return http.StatusAccepted, map[string]any{"firewall": fw.clone()}
}

// updateFirewall serves PUT /v2/firewalls/{id}: a full replace.
func (s *Server) updateFirewall(r *http.Request) (int, any) {
	fw, ok := s.st.firewalls[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	var req firewallRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if msg := s.validateFirewall(&req); msg != "" {
		return unprocessable("%s", msg)
	}
	fw.set(&req)
	return http.StatusOK, map[string]any{"firewall": fw.clone()}
}

func (fw *Firewall) set(req *firewallRequest) {
	fw.Name, fw.Status = req.Name, "succeeded"
	fw.InboundRules = append([]InboundRule{}, req.InboundRules...)
	fw.OutboundRules = append([]OutboundRule{}, req.OutboundRules...)
	fw.DropletIDs = append([]int{}, req.DropletIDs...)
	fw.Tags = append([]string{}, req.Tags...)
}

func (s *Server) deleteFirewall(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.firewalls[id]; !ok {
		return notFound()
	}
	delete(s.st.firewalls, id)
	s.st.fwOrder = slices.DeleteFunc(s.st.fwOrder, func(x string) bool { return x == id })
	return http.StatusNoContent, nil
}
