package tritonsim

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fwRule is a parsed Cloud Firewall rule (sdc-fwrule docs/rules.md):
//
//	FROM <targets> TO <targets> ALLOW|BLOCK <protocol> <ports or types> [PRIORITY <n>]
//
// Targets are any, all vms, vm <uuid>, ip <addr>, subnet <cidr>, tag
// <name> and tag <name> = <value> (quoted or not), or an OR-list of them
// in parentheses. Ports are port <n>, port all, (port <n> AND port <m>)
// or ports <n>[-<m>], ... (also "<n> - <m>"); ICMP takes type <n> [code
// <m>] or type all, or (type <n> [code <m>] AND ...). A rule must affect
// VMs: all vms, a vm or a tag on one side (sdc-fwrule's "rule does not
// affect VMs").
type fwRule struct {
	from, to []fwTarget
	action   string // allow or block
	protocol string // tcp, udp, icmp, icmp6, ah or esp
	ports    []fwPort
	allPorts bool
	types    []icmpType
	allTypes bool
	priority int
}

// fwPort is a port, or a range of them.
type fwPort struct {
	lo, hi  int
	isRange bool
}

// icmpType is an ICMP type, with its code when the rule gives one.
type icmpType struct {
	typ, code int
	hasCode   bool
}

// fwTarget is one target of a rule.
type fwTarget struct {
	kind  string // any, all vms, vm, ip, subnet, tag
	name  string // the vm's UUID, ip, subnet or tag name
	value string // the tag's value; "" for any value
	hasV  bool
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// fwParser reads a rule's tokens: words, quoted strings, ( ) , and =.
type fwParser struct {
	toks []string
	pos  int
}

func tokenize(rule string) ([]string, error) {
	var toks []string
	for i := 0; i < len(rule); {
		c := rule[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.ContainsRune("(),=", rune(c)):
			toks = append(toks, string(c))
			i++
		case c == '"':
			end := strings.IndexByte(rule[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote at character %d", i)
			}
			toks = append(toks, rule[i:i+end+2])
			i += end + 2
		default:
			j := i
			for j < len(rule) && !strings.ContainsRune(" \t\n(),=\"", rune(rule[j])) {
				j++
			}
			toks = append(toks, rule[i:j])
			i = j
		}
	}
	return toks, nil
}

// parseFWRule parses and checks a rule's text.
func parseFWRule(text string) (fwRule, error) {
	toks, err := tokenize(text)
	if err != nil {
		return fwRule{}, err
	}
	p := &fwParser{toks: toks}
	var r fwRule
	if err := p.keyword("from"); err != nil {
		return r, err
	}
	if r.from, err = p.targets(); err != nil {
		return r, err
	}
	if err := p.keyword("to"); err != nil {
		return r, err
	}
	if r.to, err = p.targets(); err != nil {
		return r, err
	}
	if r.action, err = p.oneOf("allow", "block"); err != nil {
		return r, err
	}
	if err := p.protocol(&r); err != nil {
		return r, err
	}
	if p.peekIs("priority") {
		p.pos++
		if r.priority, err = strconv.Atoi(p.next()); err != nil || r.priority < 0 || r.priority > 100 {
			return r, fmt.Errorf("priority must be a number from 0 to 100")
		}
	}
	if p.pos < len(p.toks) {
		return r, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	if !r.affectsVMs() {
		return r, fmt.Errorf("rule does not affect VMs")
	}
	return r, nil
}

// affectsVMs reports whether a side of r names VMs: all vms, a vm or a
// tag.
func (r fwRule) affectsVMs() bool {
	for _, t := range append(slices.Clip(r.from), r.to...) {
		if t.kind == "all vms" || t.kind == "vm" || t.kind == "tag" {
			return true
		}
	}
	return false
}

func (p *fwParser) next() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	p.pos++
	return p.toks[p.pos-1]
}

func (p *fwParser) peekIs(word string) bool {
	return p.pos < len(p.toks) && strings.EqualFold(p.toks[p.pos], word)
}

func (p *fwParser) keyword(word string) error {
	if got := p.next(); !strings.EqualFold(got, word) {
		return fmt.Errorf("expected %s, got %q", strings.ToUpper(word), got)
	}
	return nil
}

// oneOf reads one of words and returns it (lower case).
func (p *fwParser) oneOf(words ...string) (string, error) {
	got := p.next()
	for _, w := range words {
		if strings.EqualFold(got, w) {
			return w, nil
		}
	}
	return "", fmt.Errorf("expected one of %s, got %q", strings.ToUpper(strings.Join(words, ", ")), got)
}

// targets reads a target or a parenthesized OR-list of them.
func (p *fwParser) targets() ([]fwTarget, error) {
	if !p.peekIs("(") {
		t, err := p.target()
		return []fwTarget{t}, err
	}
	p.pos++
	var out []fwTarget
	for {
		t, err := p.target()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if p.peekIs(")") {
			p.pos++
			return out, nil
		}
		if err := p.keyword("or"); err != nil {
			return nil, err
		}
	}
}

func (p *fwParser) target() (fwTarget, error) {
	kind := strings.ToLower(p.next())
	switch kind {
	case "any":
		return fwTarget{kind: kind}, nil
	case "all":
		return fwTarget{kind: "all vms"}, p.keyword("vms")
	case "vm":
		id := strings.ToLower(p.next())
		if !uuidPattern.MatchString(id) {
			return fwTarget{}, fmt.Errorf("vm %q is not a UUID", id)
		}
		return fwTarget{kind: kind, name: id}, nil
	case "ip":
		ip := p.next()
		if _, err := netip.ParseAddr(ip); err != nil {
			return fwTarget{}, fmt.Errorf("ip %q is not an IP address", ip)
		}
		return fwTarget{kind: kind, name: ip}, nil
	case "subnet":
		cidr := p.next()
		if _, err := netip.ParsePrefix(cidr); err != nil {
			return fwTarget{}, fmt.Errorf("subnet %q is not a CIDR", cidr)
		}
		return fwTarget{kind: kind, name: cidr}, nil
	case "tag":
		name := unquote(p.next())
		if name == "" || name == "(" || name == ")" {
			return fwTarget{}, fmt.Errorf("tag needs a name")
		}
		t := fwTarget{kind: kind, name: name}
		if p.peekIs("=") {
			p.pos++
			t.value, t.hasV = unquote(p.next()), true
			if t.value == "" || t.value == ")" {
				return fwTarget{}, fmt.Errorf("tag %q = needs a value", name)
			}
		}
		return t, nil
	}
	return fwTarget{}, fmt.Errorf("%q is not a target (any, all vms, vm, ip, subnet, tag)", kind)
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// protocol reads the protocol and its ports or ICMP types into r.
func (p *fwParser) protocol(r *fwRule) error {
	switch r.protocol = strings.ToLower(p.next()); r.protocol {
	case "tcp", "udp":
		return p.ports(r)
	case "icmp", "icmp6":
		return p.icmpTypes(r)
	case "ah", "esp":
		return nil
	default:
		return fmt.Errorf("protocol %q is not one of tcp, udp, icmp, icmp6, ah, esp", r.protocol)
	}
}

// ports reads PORT all, PORT <n>, ( PORT all ), (PORT <n> AND PORT <m>
// ...) or PORTS <list>.
func (p *fwParser) ports(r *fwRule) error {
	switch {
	case p.peekIs("("):
		p.pos++
		for {
			if err := p.keyword("port"); err != nil {
				return err
			}
			if err := p.port(r); err != nil {
				return err
			}
			if p.peekIs(")") {
				p.pos++
				return nil
			}
			if err := p.keyword("and"); err != nil {
				return err
			}
		}
	case p.peekIs("port"):
		p.pos++
		return p.port(r)
	case p.peekIs("ports"):
		p.pos++
		return p.portList(r)
	}
	return fmt.Errorf("expected PORT or PORTS, got %q", p.next())
}

// port reads a port number, or all.
func (p *fwParser) port(r *fwRule) error {
	if p.peekIs("all") {
		p.pos++
		r.allPorts = true
		return nil
	}
	n, err := portNumber(p.next())
	r.ports = append(r.ports, fwPort{lo: n, hi: n})
	return err
}

// portList reads "80, 443, 8000-8100" (or "30000 - 32767").
func (p *fwParser) portList(r *fwRule) error {
	for {
		lo, hi, isRange := strings.Cut(p.next(), "-")
		if !isRange && p.peekIs("-") {
			p.pos++
			hi, isRange = p.next(), true
		}
		var pr fwPort
		var err error
		if pr.lo, err = portNumber(lo); err != nil {
			return err
		}
		pr.hi, pr.isRange = pr.lo, isRange
		if isRange {
			if pr.hi, err = portNumber(hi); err != nil {
				return err
			}
			if pr.hi < pr.lo {
				return fmt.Errorf("port range %d - %d ends before it starts", pr.lo, pr.hi)
			}
		}
		r.ports = append(r.ports, pr)
		if !p.peekIs(",") {
			return nil
		}
		p.pos++
	}
}

func portNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// icmpTypes reads TYPE all, TYPE <n> [CODE <m>] or (TYPE <n> [CODE <m>]
// AND ...).
func (p *fwParser) icmpTypes(r *fwRule) error {
	if !p.peekIs("(") {
		return p.icmpType(r)
	}
	p.pos++
	for {
		if err := p.icmpType(r); err != nil {
			return err
		}
		if p.peekIs(")") {
			p.pos++
			return nil
		}
		if err := p.keyword("and"); err != nil {
			return err
		}
	}
}

func (p *fwParser) icmpType(r *fwRule) error {
	if err := p.keyword("type"); err != nil {
		return err
	}
	if p.peekIs("all") {
		p.pos++
		r.allTypes = true
		return nil
	}
	var t icmpType
	var err error
	if t.typ, err = strconv.Atoi(p.next()); err != nil || t.typ < 0 || t.typ > 255 {
		return fmt.Errorf("ICMP type must be a number from 0 to 255")
	}
	if p.peekIs("code") {
		p.pos++
		if t.code, err = strconv.Atoi(p.next()); err != nil || t.code < 0 || t.code > 255 {
			return fmt.Errorf("ICMP code must be a number from 0 to 255")
		}
		t.hasCode = true
	}
	r.types = append(r.types, t)
	return nil
}

// affects reports whether the rule targets m: vm <its id>, all vms, or a
// tag it has (with the value, when the target gives one).
func (r fwRule) affects(m *Machine) bool {
	for _, t := range append(slices.Clip(r.from), r.to...) {
		switch t.kind {
		case "all vms":
			return true
		case "vm":
			if t.name == m.ID {
				return true
			}
		case "tag":
			v, has := m.Tags[t.name]
			if has && (!t.hasV || fmt.Sprint(v) == t.value) {
				return true
			}
		}
	}
	return false
}
