package openstacksim

import (
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// defaultSecurityGroup is the project's "default" group, created on first
// use as Neutron does. The caller holds s.mu.
func (st *state) defaultSecurityGroup(projectID string) *SecurityGroup {
	for _, g := range st.securityGroups.All() {
		if g.Name == "default" && g.ProjectID == projectID {
			return g
		}
	}
	g := st.newSecurityGroup("default", "Default security group", projectID)
	for _, eth := range []string{"IPv4", "IPv6"} {
		remote := g.ID
		g.Rules = append(g.Rules, st.newRule(g, SecurityGroupRule{Direction: "ingress", EtherType: eth, RemoteGroupID: &remote}))
	}
	return g
}

// newSecurityGroup adds a group with Neutron's default egress rules.
func (st *state) newSecurityGroup(name, description, projectID string) *SecurityGroup {
	g := &SecurityGroup{
		ID: st.newID(kSecurityGroup), Name: name, Description: description, Stateful: true,
		Rules: []SecurityGroupRule{}, TaggedAttributes: newTaggedAttributes(nil, projectID),
	}
	for _, eth := range []string{"IPv4", "IPv6"} {
		g.Rules = append(g.Rules, st.newRule(g, SecurityGroupRule{Direction: "egress", EtherType: eth}))
	}
	st.securityGroups.Put(g.ID, g)
	return g
}

func (st *state) newRule(g *SecurityGroup, r SecurityGroupRule) SecurityGroupRule {
	r.ID, r.SecurityGroupID = st.newID(kSecurityGroupRule), g.ID
	r.StandardAttributes = newStandardAttributes(g.ProjectID, 0)
	return r
}

func (s *Server) createSecurityGroup(r *http.Request) response {
	obj, err := decodeEnvelope(r, "security_group")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	var req struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	}
	if err := decodeAttrs(obj, &req); err != nil {
		return neutronBadRequest("%v", err)
	}
	if req.Name == "default" {
		return neutronError(http.StatusConflict, "SecurityGroupDefaultAlreadyExists", "Default security group already exists.")
	}
	g := s.st.newSecurityGroup(req.Name, req.Description, s.st.projectID)
	g.Tags = nonNil(req.Tags)
	return created(map[string]any{"security_group": g})
}

func (s *Server) updateSecurityGroup(r *http.Request) response {
	g, ok := s.st.securityGroups.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Security group", r.PathValue("id"))
	}
	if errResp := ifMatch(r, g.RevisionNumber); errResp != nil {
		return *errResp
	}
	obj, err := decodeEnvelope(r, "security_group")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	next, err := patch(*g, obj, "name", "description", "tags")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	next.Tags = nonNil(next.Tags)
	next.revise()
	*g = next
	return ok200("security_group", g)
}

func (s *Server) deleteSecurityGroup(r *http.Request) response {
	g, ok := s.st.securityGroups.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Security group", r.PathValue("id"))
	}
	for _, p := range s.st.ports.All() {
		if slices.Contains(p.SecurityGroups, g.ID) {
			return neutronError(http.StatusConflict, "SecurityGroupInUse", "Security Group %s in use.", g.ID)
		}
	}
	s.st.securityGroups.Del(g.ID)
	return noContent()
}

// allRules are every rule with its group.
func (s *Server) allRules() []*SecurityGroupRule {
	var out []*SecurityGroupRule
	for _, g := range s.st.securityGroups.All() {
		for i := range g.Rules {
			out = append(out, &g.Rules[i])
		}
	}
	return out
}

func (s *Server) findRule(id string) (*SecurityGroup, int) {
	for _, g := range s.st.securityGroups.All() {
		if i := slices.IndexFunc(g.Rules, func(r SecurityGroupRule) bool { return r.ID == id }); i >= 0 {
			return g, i
		}
	}
	return nil, -1
}

func (s *Server) listSecurityGroupRules(r *http.Request) response {
	items := []map[string]any{}
	for _, rule := range s.allRules() {
		items = append(items, toMap(rule))
	}
	return s.neutronList(r, "security_group_rules", "Security group rule", items)
}

func (s *Server) getSecurityGroupRule(r *http.Request) response {
	g, i := s.findRule(r.PathValue("id"))
	if g == nil {
		return neutronNotFound("Security group rule", r.PathValue("id"))
	}
	return ok200("security_group_rule", g.Rules[i])
}

func (s *Server) createSecurityGroupRule(r *http.Request) response {
	obj, err := decodeEnvelope(r, "security_group_rule")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	var req SecurityGroupRule
	if err := decodeAttrs(obj, &req); err != nil {
		return neutronBadRequest("%v", err)
	}
	g, ok := s.st.securityGroups.Get(req.SecurityGroupID)
	if !ok {
		return neutronNotFound("Security group", req.SecurityGroupID)
	}
	if req.EtherType == "" {
		req.EtherType = "IPv4"
	}
	if errResp := checkRule(&req); errResp != nil {
		return *errResp
	}
	for _, have := range g.Rules {
		if sameRule(have, req) {
			return neutronError(http.StatusConflict, "SecurityGroupRuleExists", "Security group rule already exists. Rule id is %s.", have.ID)
		}
	}
	rule := s.st.newRule(g, SecurityGroupRule{
		Description: req.Description, Direction: req.Direction, EtherType: req.EtherType, Protocol: req.Protocol,
		PortRangeMin: req.PortRangeMin, PortRangeMax: req.PortRangeMax, RemoteIPPrefix: req.RemoteIPPrefix, RemoteGroupID: req.RemoteGroupID,
	})
	g.Rules = append(g.Rules, rule)
	g.RevisionNumber++
	return created(map[string]any{"security_group_rule": rule})
}

// checkRule validates a new rule as Neutron does, normalizing the prefix.
func checkRule(r *SecurityGroupRule) *response {
	bad := func(format string, args ...any) *response { resp := neutronBadRequest(format, args...); return &resp }
	if r.Direction != "ingress" && r.Direction != "egress" {
		return bad("Invalid input for direction. Reason: %s is not in valid_values.", r.Direction)
	}
	if r.EtherType != "IPv4" && r.EtherType != "IPv6" {
		return bad("Invalid input for ethertype. Reason: %s is not in valid_values.", r.EtherType)
	}
	if r.RemoteIPPrefix != nil && r.RemoteGroupID != nil {
		return bad("Only remote_ip_prefix or remote_group_id may be provided.")
	}
	if r.RemoteIPPrefix != nil {
		p, err := netip.ParsePrefix(*r.RemoteIPPrefix)
		if err != nil {
			return bad("Invalid input for remote_ip_prefix. Reason: '%s' is not a valid IP subnet.", *r.RemoteIPPrefix)
		}
		if p.Addr().Is4() != (r.EtherType == "IPv4") {
			return bad("Conflicting value ethertype %s for CIDR %s", r.EtherType, *r.RemoteIPPrefix)
		}
		norm := p.Masked().String()
		r.RemoteIPPrefix = &norm
	}
	if r.Protocol != nil {
		lower := strings.ToLower(*r.Protocol)
		r.Protocol = &lower
	}
	if r.PortRangeMin != nil || r.PortRangeMax != nil {
		if r.Protocol == nil || !slices.Contains([]string{"tcp", "udp", "sctp", "6", "17", "132"}, *r.Protocol) {
			return bad("Must also specify protocol if port range is given.")
		}
		if r.PortRangeMin == nil || r.PortRangeMax == nil || *r.PortRangeMin < 1 || *r.PortRangeMax > 65535 || *r.PortRangeMin > *r.PortRangeMax {
			return bad("For TCP/UDP protocols, port_range_min must be <= port_range_max")
		}
	}
	return nil
}

// sameRule reports whether two rules are duplicates, as Neutron checks:
// no remote prefix and 0.0.0.0/0 (or ::/0) are the same.
func sameRule(a, b SecurityGroupRule) bool {
	eqS := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqI := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.Direction == b.Direction && a.EtherType == b.EtherType && eqS(a.Protocol, b.Protocol) &&
		eqI(a.PortRangeMin, b.PortRangeMin) && eqI(a.PortRangeMax, b.PortRangeMax) &&
		eqS(anyPrefix(a.RemoteIPPrefix), anyPrefix(b.RemoteIPPrefix)) && eqS(a.RemoteGroupID, b.RemoteGroupID)
}

// anyPrefix is nil for a prefix that matches every address.
func anyPrefix(p *string) *string {
	if p != nil && (*p == "0.0.0.0/0" || *p == "::/0") {
		return nil
	}
	return p
}

func (s *Server) deleteSecurityGroupRule(r *http.Request) response {
	g, i := s.findRule(r.PathValue("id"))
	if g == nil {
		return neutronNotFound("Security group rule", r.PathValue("id"))
	}
	g.Rules = slices.Delete(g.Rules, i, i+1)
	g.RevisionNumber++
	return noContent()
}
