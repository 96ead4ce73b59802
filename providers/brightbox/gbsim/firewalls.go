package gbsim

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// FirewallPolicy is a firewall policy as the simulator holds it; its rules
// are FirewallRules naming it. AddFirewallPolicy seeds one.
type FirewallPolicy struct {
	// ID is "fwp-xxxxx"; "" gets a new one.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
	// ServerGroup is the group the policy applies to, "" for none.
	ServerGroup string    `json:"server_group"`
	CreatedAt   time.Time `json:"created_at"`
}

func (p *FirewallPolicy) clone() FirewallPolicy { return *p }

// FirewallRule is a rule of a firewall policy. Source and Destination are
// "any", a CIDR, a server, server group or load balancer ID; ports are
// lists and ranges ("80,443", "30000-32767").
type FirewallRule struct {
	// ID is "fwr-xxxxx"; "" gets a new one.
	ID              string    `json:"id"`
	FirewallPolicy  string    `json:"firewall_policy"`
	Protocol        string    `json:"protocol"`
	Source          string    `json:"source"`
	SourcePort      string    `json:"source_port"`
	Destination     string    `json:"destination"`
	DestinationPort string    `json:"destination_port"`
	IcmpTypeName    string    `json:"icmp_type_name"`
	Description     string    `json:"description"`
	CreatedAt       time.Time `json:"created_at"`
}

// AddFirewallPolicy creates a firewall policy from p with rules and
// returns the policy as stored. It panics on a server group or rule the
// API would refuse: a test's mistake.
func (s *Server) AddFirewallPolicy(p FirewallPolicy, rules ...FirewallRule) FirewallPolicy {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if p.ID == "" {
		p.ID = st.newID("fwp")
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = epoch
	}
	if p.ServerGroup != "" {
		if _, ok := st.groups.Get(p.ServerGroup); !ok || st.policyOf(p.ServerGroup) != nil {
			panic("gbsim: firewall policy " + p.ID + ": server group " + p.ServerGroup + " is missing or has a policy")
		}
	}
	stored := p
	st.policies.Put(p.ID, &stored)
	for _, r := range rules {
		if r.ID == "" {
			r.ID = st.newID("fwr")
		}
		if r.CreatedAt.IsZero() {
			r.CreatedAt = epoch
		}
		r.FirewallPolicy = p.ID
		if err := validateRule(st, &r); err != nil {
			panic("gbsim: " + err.Error())
		}
		st.rules.Put(r.ID, &r)
	}
	return stored
}

// FirewallPolicies returns the firewall policies, oldest first.
func (s *Server) FirewallPolicies() []FirewallPolicy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.policies.All(), (*FirewallPolicy).clone)
}

// FirewallRules returns the rules of every policy, oldest first.
func (s *Server) FirewallRules() []FirewallRule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.rules.All(), func(r *FirewallRule) FirewallRule { return *r })
}

type policyRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	ServerGroup *string `json:"server_group"`
}

func (s *Server) listFirewallPolicies(r *http.Request) simkit.Response {
	return list(s.st.policies, s.view(r).policy)
}

func (s *Server) getFirewallPolicy(r *http.Request) simkit.Response {
	return get(r, s.st.policies, s.view(r).policy)
}

// applicable answers nil when policy p may be applied to server group id.
func (st *state) applicable(p *FirewallPolicy, groupID string) *simkit.Response {
	refuse := func(resp simkit.Response) *simkit.Response { return &resp }
	if _, ok := st.groups.Get(groupID); !ok {
		return refuse(invalid("server_group: no server group %q", groupID))
	}
	if other := st.policyOf(groupID); other != nil && other != p {
		return refuse(conflict("Server group %s already has firewall policy %s", groupID, other.ID))
	}
	if p != nil && p.ServerGroup != "" && p.ServerGroup != groupID {
		return refuse(conflict("Firewall policy %s is applied to %s", p.ID, p.ServerGroup))
	}
	return nil
}

func (s *Server) createFirewallPolicy(r *http.Request) simkit.Response {
	var req policyRequest
	if resp := decode(r, &req, true); resp != nil {
		return *resp
	}
	p := FirewallPolicy{ID: s.st.newID("fwp"), CreatedAt: s.st.now()}
	if req.Name != nil {
		p.Name = *req.Name
	}
	if req.Description != nil {
		p.Description = *req.Description
	}
	if req.ServerGroup != nil && *req.ServerGroup != "" {
		if resp := s.st.applicable(nil, *req.ServerGroup); resp != nil {
			return *resp
		}
		p.ServerGroup = *req.ServerGroup
	}
	s.st.policies.Put(p.ID, &p)
	return created(s.view(r).policy(&p))
}

func (s *Server) updateFirewallPolicy(r *http.Request) simkit.Response {
	p, found := s.st.policies.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req policyRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if req.Name != nil {
		p.Name = *req.Name
	}
	if req.Description != nil {
		p.Description = *req.Description
	}
	return ok(s.view(r).policy(p))
}

func (s *Server) deleteFirewallPolicy(r *http.Request) simkit.Response {
	p, found := s.st.policies.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if p.Default {
		return conflict("Firewall policy %s is the default policy", p.ID)
	}
	body := s.view(r).policy(p)
	for _, rule := range s.st.rules.All() {
		if rule.FirewallPolicy == p.ID {
			s.st.rules.Del(rule.ID)
		}
	}
	s.st.policies.Del(p.ID)
	return accepted(body)
}

func (s *Server) applyFirewallPolicy(r *http.Request) simkit.Response {
	p, found := s.st.policies.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req struct {
		ServerGroup string `json:"server_group"`
	}
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if p.ServerGroup == req.ServerGroup {
		return conflict("Firewall policy %s is already applied to %s", p.ID, req.ServerGroup)
	}
	if resp := s.st.applicable(p, req.ServerGroup); resp != nil {
		return *resp
	}
	p.ServerGroup = req.ServerGroup
	return accepted(s.view(r).policy(p))
}

func (s *Server) removeFirewallPolicy(r *http.Request) simkit.Response {
	p, found := s.st.policies.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req struct {
		ServerGroup string `json:"server_group"`
	}
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if p.ServerGroup == "" || p.ServerGroup != req.ServerGroup {
		return conflict("Firewall policy %s is not applied to %q", p.ID, req.ServerGroup)
	}
	p.ServerGroup = ""
	return accepted(s.view(r).policy(p))
}

// ruleRequest is the body of POST and PUT /1.0/firewall_rules.
type ruleRequest struct {
	FirewallPolicy  *string `json:"firewall_policy"`
	Protocol        *string `json:"protocol"`
	Source          *string `json:"source"`
	SourcePort      *string `json:"source_port"`
	Destination     *string `json:"destination"`
	DestinationPort *string `json:"destination_port"`
	IcmpTypeName    *string `json:"icmp_type_name"`
	Description     *string `json:"description"`
}

func (req ruleRequest) apply(r *FirewallRule) {
	for dst, src := range map[*string]*string{
		&r.Protocol: req.Protocol, &r.Source: req.Source, &r.SourcePort: req.SourcePort,
		&r.Destination: req.Destination, &r.DestinationPort: req.DestinationPort,
		&r.IcmpTypeName: req.IcmpTypeName, &r.Description: req.Description,
	} {
		if src != nil {
			*dst = *src
		}
	}
}

// RuleProtocols are the protocols a firewall rule names ("" is any);
// a protocol number is taken too.
var RuleProtocols = []string{"tcp", "udp", "icmp", "icmpv6", "esp", "ah", "gre"}

var (
	portList       = regexp.MustCompile(`^\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*$`)
	protocolNumber = regexp.MustCompile(`^\d{1,3}$`)
)

// validateRule checks a rule as the API would store it; st, when not
// nil, checks that the servers, groups and load balancers it names exist.
func validateRule(st *state, r *FirewallRule) error {
	var errs []error
	if r.Source == "" && r.Destination == "" {
		errs = append(errs, errors.New("a rule needs a source or a destination"))
	}
	for field, end := range map[string]string{"source": r.Source, "destination": r.Destination} {
		if err := validateEnd(st, end); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	if r.Protocol != "" && !slices.Contains(RuleProtocols, r.Protocol) && !protocolNumber.MatchString(r.Protocol) {
		errs = append(errs, fmt.Errorf("protocol: %q is not one of %v or a number", r.Protocol, RuleProtocols))
	}
	for field, ports := range map[string]string{"source_port": r.SourcePort, "destination_port": r.DestinationPort} {
		switch {
		case ports == "":
		case r.Protocol != "tcp" && r.Protocol != "udp":
			errs = append(errs, fmt.Errorf("%s: ports need protocol tcp or udp", field))
		case !portList.MatchString(ports):
			errs = append(errs, fmt.Errorf("%s: %q is not a list of ports and ranges", field, ports))
		}
	}
	return errors.Join(errs...)
}

// validateEnd checks a rule's source or destination: "" (none), "any",
// an IPv4 or IPv6 address or CIDR, or a server, server group or load
// balancer.
func validateEnd(st *state, end string) error {
	if end == "" || end == "any" {
		return nil
	}
	if _, err := netip.ParsePrefix(end); err == nil {
		return nil
	}
	if _, err := netip.ParseAddr(end); err == nil {
		return nil
	}
	var found bool
	switch prefix, _, _ := strings.Cut(end, "-"); prefix {
	case "srv":
		_, found = st.servers.Get(end)
	case "grp":
		_, found = st.groups.Get(end)
	case "lba":
		_, found = st.lbs.Get(end)
	default:
		return fmt.Errorf("%q is not any, an address, a CIDR, a server, a server group or a load balancer", end)
	}
	if !found {
		return fmt.Errorf("no %s", end)
	}
	return nil
}

func (s *Server) listFirewallRules(r *http.Request) simkit.Response {
	return list(s.st.rules, s.view(r).rule)
}

func (s *Server) getFirewallRule(r *http.Request) simkit.Response {
	return get(r, s.st.rules, s.view(r).rule)
}

func (s *Server) createFirewallRule(r *http.Request) simkit.Response {
	var req ruleRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if req.FirewallPolicy == nil {
		return invalid("firewall_policy: required")
	}
	if _, found := s.st.policies.Get(*req.FirewallPolicy); !found {
		return invalid("firewall_policy: no firewall policy %q", *req.FirewallPolicy)
	}
	rule := FirewallRule{FirewallPolicy: *req.FirewallPolicy, CreatedAt: s.st.now()}
	req.apply(&rule)
	if err := validateRule(s.st, &rule); err != nil {
		return invalid("%s", err.Error())
	}
	rule.ID = s.st.newID("fwr")
	s.st.rules.Put(rule.ID, &rule)
	return created(s.view(r).rule(&rule))
}

func (s *Server) updateFirewallRule(r *http.Request) simkit.Response {
	rule, found := s.st.rules.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req ruleRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if req.FirewallPolicy != nil && *req.FirewallPolicy != rule.FirewallPolicy {
		return invalid("firewall_policy: a rule cannot move to another policy")
	}
	next := *rule
	req.apply(&next)
	if err := validateRule(s.st, &next); err != nil {
		return invalid("%s", err.Error())
	}
	*rule = next
	return accepted(s.view(r).rule(rule))
}

func (s *Server) deleteFirewallRule(r *http.Request) simkit.Response {
	rule, found := s.st.rules.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	body := s.view(r).rule(rule)
	s.st.rules.Del(rule.ID)
	return accepted(body)
}
