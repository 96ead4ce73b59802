package tritonsim

import (
	"fmt"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// FirewallRule is a Cloud Firewall rule, as GetFirewallRule serves it
// (sdc-cloudapi lib/rules.js translate; triton-go's network.FirewallRule):
// id, rule, enabled and log always, global only when true, description
// only when set.
type FirewallRule struct {
	ID      string `json:"id"`
	Rule    string `json:"rule"`
	Enabled bool   `json:"enabled"`
	// Log: the rule's traffic is logged (FWAPI's log, default false).
	Log         bool   `json:"log"`
	Global      bool   `json:"global,omitempty"`
	Description string `json:"description,omitempty"`
}

// AddFirewallRule adds a rule, as if created earlier, and returns it; an
// empty ID is generated, the text is kept as FWAPI writes it back. A rule
// that does not parse is an error.
func (s *Server) AddFirewallRule(r FirewallRule) (FirewallRule, error) {
	parsed, err := parseFWRule(r.Rule)
	if err != nil {
		return FirewallRule{}, fmt.Errorf("rule %q: %w", r.Rule, err)
	}
	r.Rule = parsed.text()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == "" {
		r.ID = s.st.uuid("fwrule")
	}
	s.st.rules.Put(r.ID, &r)
	return r, nil
}

// FirewallRules returns every firewall rule, oldest first.
func (s *Server) FirewallRules() []FirewallRule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.rules.All(), func(r *FirewallRule) FirewallRule { return *r })
}

// ruleRequest is the body of CreateFirewallRule and UpdateFirewallRule.
type ruleRequest struct {
	Enabled     *bool   `json:"enabled"`
	Log         *bool   `json:"log"`
	Rule        *string `json:"rule"`
	Description *string `json:"description"`
}

func (s *Server) listRules(*http.Request) simkit.Response {
	return ok(simkit.CloneAll(s.st.rules.All(), func(r *FirewallRule) FirewallRule { return *r }))
}

// createRule serves CreateFirewallRule: 201 with the rule; a rule text
// that does not parse gets 409 InvalidArgument.
func (s *Server) createRule(r *http.Request) simkit.Response {
	var req ruleRequest
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	if req.Rule == nil || *req.Rule == "" {
		return failCode(http.StatusConflict, codeMissingParameter, "rule is required")
	}
	rule := &FirewallRule{ID: s.st.uuid("fwrule")}
	if fail := applyRule(rule, req); fail != nil {
		return *fail
	}
	s.st.rules.Put(rule.ID, rule)
	return created(*rule)
}

// applyRule sets the fields the request gives on rule, after parsing its
// text, which is kept as FWAPI writes it back (fwRule.text).
func applyRule(rule *FirewallRule, req ruleRequest) *simkit.Response {
	if req.Rule != nil {
		parsed, err := parseFWRule(*req.Rule)
		if err != nil {
			resp := invalid("rule %q: %s", *req.Rule, err.Error())
			return &resp
		}
		rule.Rule = parsed.text()
	}
	if req.Enabled != nil {
		rule.Enabled = *req.Enabled
	}
	if req.Log != nil {
		rule.Log = *req.Log
	}
	if req.Description != nil {
		rule.Description = *req.Description
	}
	return nil
}

func (s *Server) rule(r *http.Request) (*FirewallRule, *simkit.Response) {
	rule, found := s.st.rules.Get(r.PathValue("id"))
	if !found {
		resp := notFound("firewall rule", r.PathValue("id"))
		return nil, &resp
	}
	return rule, nil
}

func (s *Server) getRule(r *http.Request) simkit.Response {
	rule, fail := s.rule(r)
	if fail != nil {
		return *fail
	}
	return ok(*rule)
}

// updateRule serves UpdateFirewallRule (POST): the fields the body gives
// change; a global rule is the operator's, 409 InvalidArgument.
func (s *Server) updateRule(r *http.Request) simkit.Response {
	rule, fail := s.rule(r)
	if fail != nil {
		return *fail
	}
	if rule.Global {
		return invalid("global rules cannot be modified")
	}
	var req ruleRequest
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	next := *rule
	if fail := applyRule(&next, req); fail != nil {
		return *fail
	}
	*rule = next
	return ok(*rule)
}

func (s *Server) deleteRule(r *http.Request) simkit.Response {
	rule, fail := s.rule(r)
	if fail != nil {
		return *fail
	}
	s.st.rules.Del(rule.ID)
	return noContent()
}

// enableRule serves POST .../enable and .../disable: 200 with the rule.
func (s *Server) enableRule(on bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		rule, fail := s.rule(r)
		if fail != nil {
			return *fail
		}
		rule.Enabled = on
		return ok(*rule)
	}
}

// listRuleMachines serves ListFirewallRuleMachines: the machines (not
// deleted) the rule targets.
func (s *Server) listRuleMachines(r *http.Request) simkit.Response {
	rule, fail := s.rule(r)
	if fail != nil {
		return *fail
	}
	parsed, _ := parseFWRule(rule.Rule)
	out := []machineJSON{}
	for _, m := range s.st.machines.All() {
		if m.State != StateDeleted && parsed.affects(m) {
			out = append(out, s.st.machineJSON(m))
		}
	}
	return ok(out)
}

// listMachineRules serves ListMachineFirewallRules: the rules that target
// the machine.
func (s *Server) listMachineRules(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	out := []FirewallRule{}
	for _, rule := range s.st.rules.All() {
		if parsed, err := parseFWRule(rule.Rule); err == nil && parsed.affects(m) {
			out = append(out, *rule)
		}
	}
	return ok(out)
}
