package tritonsim

import (
	"fmt"
	"net/netip"
	"regexp"
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
// <m>] or type all.
type fwRule struct {
	from, to []fwTarget
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
	if err := p.oneOf("allow", "block"); err != nil {
		return r, err
	}
	if err := p.protocol(); err != nil {
		return r, err
	}
	if p.peekIs("priority") {
		p.pos++
		if n, err := strconv.Atoi(p.next()); err != nil || n < 0 || n > 100 {
			return r, fmt.Errorf("priority must be a number from 0 to 100")
		}
	}
	if p.pos < len(p.toks) {
		return r, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return r, nil
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

func (p *fwParser) oneOf(words ...string) error {
	got := p.next()
	for _, w := range words {
		if strings.EqualFold(got, w) {
			return nil
		}
	}
	return fmt.Errorf("expected one of %s, got %q", strings.ToUpper(strings.Join(words, ", ")), got)
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

// protocol reads the protocol and its ports or ICMP types.
func (p *fwParser) protocol() error {
	switch proto := strings.ToLower(p.next()); proto {
	case "tcp", "udp":
		return p.ports()
	case "icmp", "icmp6":
		return p.icmpTypes()
	case "ah", "esp":
		return nil
	default:
		return fmt.Errorf("protocol %q is not one of tcp, udp, icmp, icmp6, ah, esp", proto)
	}
}

func (p *fwParser) ports() error {
	switch {
	case p.peekIs("("):
		p.pos++
		for {
			if err := p.keyword("port"); err != nil {
				return err
			}
			if err := port(p.next()); err != nil {
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
		if p.peekIs("all") {
			p.pos++
			return nil
		}
		return port(p.next())
	case p.peekIs("ports"):
		p.pos++
		return p.portList()
	}
	return fmt.Errorf("expected PORT or PORTS, got %q", p.next())
}

// portList reads "80, 443, 8000-8100" (or "30000 - 32767").
func (p *fwParser) portList() error {
	for {
		lo, hi, isRange := strings.Cut(p.next(), "-")
		if err := port(lo); err != nil {
			return err
		}
		if !isRange && p.peekIs("-") {
			p.pos++
			hi, isRange = p.next(), true
		}
		if isRange {
			if err := port(hi); err != nil {
				return err
			}
		}
		if !p.peekIs(",") {
			return nil
		}
		p.pos++
	}
}

func port(s string) error {
	if n, err := strconv.Atoi(s); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return nil
}

func (p *fwParser) icmpTypes() error {
	if err := p.keyword("type"); err != nil {
		return err
	}
	if p.peekIs("all") {
		p.pos++
		return nil
	}
	if n, err := strconv.Atoi(p.next()); err != nil || n < 0 || n > 255 {
		return fmt.Errorf("ICMP type must be a number from 0 to 255")
	}
	if p.peekIs("code") {
		p.pos++
		if n, err := strconv.Atoi(p.next()); err != nil || n < 0 || n > 255 {
			return fmt.Errorf("ICMP code must be a number from 0 to 255")
		}
	}
	return nil
}

// affects reports whether the rule targets m: vm <its id>, all vms, or a
// tag it has (with the value, when the target gives one).
func (r fwRule) affects(m *Machine) bool {
	for _, t := range append(r.from[:len(r.from):len(r.from)], r.to...) {
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
