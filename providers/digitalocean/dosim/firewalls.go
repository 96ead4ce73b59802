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

// Firewall statuses: a write leaves a firewall "waiting" with its
// pending changes until they are applied to its droplets.
const (
	FirewallWaiting   = "waiting"
	FirewallSucceeded = "succeeded"
)

// Firewall is a cloud firewall as the API serves it (openapi
// specification/resources/firewalls/models/firewall.yml).
type Firewall struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Status         string          `json:"status"`
	InboundRules   []InboundRule   `json:"inbound_rules"`
	OutboundRules  []OutboundRule  `json:"outbound_rules"`
	DropletIDs     []int           `json:"droplet_ids"`
	Tags           []string        `json:"tags"`
	Created        string          `json:"created_at"`
	PendingChanges []PendingChange `json:"pending_changes"`
}

// PendingChange is a droplet whose security policy a firewall write is
// still updating: being added to the firewall, or removed (Removing).
type PendingChange struct {
	DropletID int    `json:"droplet_id"`
	Removing  bool   `json:"removing"`
	Status    string `json:"status"`
}

// InboundRule admits traffic from Sources. The API answers PortRange "0"
// for every ICMP rule and for a TCP or UDP rule open on all ports, where
// the request said "all" (openapi firewall_rule.yml: 'or "0" when all
// ports are open for a protocol. For ICMP rules this parameter will
// always return "0"'; godo's firewalls_test.go fixtures).
type InboundRule struct {
	Protocol  string   `json:"protocol"`
	PortRange string   `json:"ports,omitempty"`
	Action    string   `json:"action,omitempty"`
	Sources   *Targets `json:"sources"`
}

// OutboundRule admits traffic to Destinations; PortRange as InboundRule's.
type OutboundRule struct {
	Protocol     string   `json:"protocol"`
	PortRange    string   `json:"ports,omitempty"`
	Action       string   `json:"action,omitempty"`
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
	c.PendingChanges = append([]PendingChange{}, fw.PendingChanges...)
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
		if msg := validateFirewallRule("inbound", in.Protocol, in.PortRange, in.Action, in.Sources); msg != "" {
			return msg
		}
	}
	for _, out := range req.OutboundRules {
		if msg := validateFirewallRule("outbound", out.Protocol, out.PortRange, out.Action, out.Destinations); msg != "" {
			return msg
		}
	}
	return ""
}

func validateFirewallRule(dir, proto, ports, action string, t *Targets) string {
	switch proto {
	case "icmp":
	case "tcp", "udp":
		if ports == "0" {
			// What the API answers for "all" it refuses in a request
			// (doctl issue 247, api-v2 issue 171).
			return "You must specify a positive value for ports."
		}
		if !validPorts(ports) {
			return fmt.Sprintf("%s rule: ports %q is not a port, a range like 8000-9000, or all", dir, ports)
		}
	default:
		return fmt.Sprintf("%s rule: protocol %q is not one of tcp, udp, icmp", dir, proto)
	}
	if !oneOf(action, "", "allow", "deny") {
		return fmt.Sprintf("%s rule: action %q is not allow or deny", dir, action)
	}
	if t == nil || len(t.Addresses)+len(t.Tags)+len(t.DropletIDs)+len(t.LoadBalancerUIDs)+len(t.KubernetesIDs) == 0 {
		return fmt.Sprintf("%s rule: at least one source or destination is required", dir)
	}
	return ""
}

// answeredPorts is the ports of a rule as the API answers them: "0" for
// ICMP and for all ports.
func answeredPorts(proto, ports string) string {
	if proto == "icmp" || ports == "all" || ports == "" {
		return "0"
	}
	return ports
}

func validPorts(p string) bool {
	if p == "all" {
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
	return s.firewallList(r, func(*Firewall) bool { return true })
}

// firewallList answers the firewalls keep accepts, paginated; each one on
// the page counts as read.
func (s *Server) firewallList(r *http.Request, keep func(*Firewall) bool) (int, any) {
	var fws []*Firewall
	for _, id := range s.st.fwOrder {
		if fw := s.st.firewalls[id]; keep(fw) {
			fws = append(fws, fw)
		}
	}
	p, err := paginate(r, fws, s.opts.PerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%s", err.Error())
	}
	out := page[Firewall]{items: make([]Firewall, 0, len(p.items)), links: p.links, meta: p.meta}
	for _, fw := range p.items {
		s.st.applying.Read(fw.ID)
		out.items = append(out.items, fw.clone())
	}
	return http.StatusOK, listBody("firewalls", out)
}

func (s *Server) getFirewall(r *http.Request) (int, any) {
	fw, ok := s.st.firewalls[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	s.st.applying.Read(fw.ID)
	return http.StatusOK, map[string]any{"firewall": fw.clone()}
}

// createFirewall serves POST /v2/firewalls: 202 with the firewall
// "waiting" on its droplets (pending_changes), as the API answers.
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
	st.firewalls[fw.ID] = fw
	st.fwOrder = append(st.fwOrder, fw.ID)
	s.changeFirewall(fw, func() { fw.set(&req) })
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
	s.changeFirewall(fw, func() { fw.set(&req) })
	return http.StatusOK, map[string]any{"firewall": fw.clone()}
}

// set stores req as the API does: ports as it answers them.
func (fw *Firewall) set(req *firewallRequest) {
	fw.Name = req.Name
	fw.InboundRules = make([]InboundRule, 0, len(req.InboundRules))
	for _, in := range req.InboundRules {
		in.PortRange = answeredPorts(in.Protocol, in.PortRange)
		fw.InboundRules = append(fw.InboundRules, in)
	}
	fw.OutboundRules = make([]OutboundRule, 0, len(req.OutboundRules))
	for _, out := range req.OutboundRules {
		out.PortRange = answeredPorts(out.Protocol, out.PortRange)
		fw.OutboundRules = append(fw.OutboundRules, out)
	}
	fw.DropletIDs = append([]int{}, req.DropletIDs...)
	fw.Tags = append([]string{}, req.Tags...)
}

// changeFirewall applies change to fw and leaves it "waiting" with a
// pending change for each droplet it applies to (directly or by tag)
// before or after, the ones it no longer applies to "removing". The
// changes are applied (status "succeeded", no pending_changes) on its
// Options.ProvisioningReads-th read (a GET of it, or a list page holding
// it), on Advance, or SettleAfter after the write.
func (s *Server) changeFirewall(fw *Firewall, change func()) {
	before := s.firewallDroplets(fw)
	change()
	after := s.firewallDroplets(fw)
	pending := []PendingChange{}
	for _, id := range after {
		pending = append(pending, PendingChange{DropletID: id, Status: FirewallWaiting})
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			pending = append(pending, PendingChange{DropletID: id, Removing: true, Status: FirewallWaiting})
		}
	}
	fw.Status, fw.PendingChanges = FirewallWaiting, pending
	s.st.applying.Start(fw.ID, func() {
		fw.Status, fw.PendingChanges = FirewallSucceeded, []PendingChange{}
	})
}

// firewallDroplets are the droplets fw applies to: its droplet_ids and the
// droplets carrying one of its tags, in ID order.
func (s *Server) firewallDroplets(fw *Firewall) []int {
	var ids []int
	for _, d := range s.st.droplets {
		if slices.Contains(fw.DropletIDs, d.ID) || slices.ContainsFunc(d.Tags, func(t string) bool { return slices.Contains(fw.Tags, t) }) {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func (s *Server) deleteFirewall(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.firewalls[id]; !ok {
		return notFound()
	}
	delete(s.st.firewalls, id)
	s.st.fwOrder = slices.DeleteFunc(s.st.fwOrder, func(x string) bool { return x == id })
	s.st.applying.Stop(id)
	return http.StatusNoContent, nil
}
