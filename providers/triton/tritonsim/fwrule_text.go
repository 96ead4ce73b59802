package tritonsim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// text is the rule as FWAPI writes it back (sdc-fwrule's FwRule.text()),
// which is what CloudAPI serves as a rule's "rule", whatever spelling it
// was created with:
//
//	FROM <targets> TO <targets> ALLOW|BLOCK <protocol> <ports or types> [PRIORITY <n>]
//
// Each side's targets deduplicated and in sdc-fwrule's order: any, all
// vms, then ips, subnets, tags and vms, each sorted; several in "( ... OR
// ... )". Tag names and values always quoted; a tag with any value takes
// the place of the same tag with values. Ports sorted by number: PORT
// all; PORT <n>; (PORT <n> AND PORT <m>) when they are single ports; and
// PORTS <n> - <m>, <k> when any is a range. ICMP types likewise: TYPE all,
// TYPE <n> [CODE <m>], (TYPE ... AND TYPE ...). Keywords upper case,
// protocols lower case; PRIORITY only when above 0.
func (r fwRule) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s TO %s %s %s", targetsText(r.from), targetsText(r.to), strings.ToUpper(r.action), r.protocol)
	switch r.protocol {
	case "tcp", "udp":
		b.WriteString(" " + r.portsText())
	case "icmp", "icmp6":
		b.WriteString(" " + r.typesText())
	}
	if r.priority > 0 {
		b.WriteString(" PRIORITY " + strconv.Itoa(r.priority))
	}
	return b.String()
}

// targetOrder is sdc-fwrule's order of target types in a rule's text.
var targetOrder = map[string]int{"any": 0, "all vms": 1, "ip": 2, "subnet": 3, "tag": 4, "vm": 5}

func targetsText(ts []fwTarget) string {
	ts = slices.Clone(ts)
	anyValue := map[string]bool{}
	for _, t := range ts {
		if t.kind == "tag" && !t.hasV {
			anyValue[t.name] = true
		}
	}
	ts = slices.DeleteFunc(ts, func(t fwTarget) bool { return t.kind == "tag" && t.hasV && anyValue[t.name] })
	slices.SortFunc(ts, func(a, b fwTarget) int {
		return cmp.Or(cmp.Compare(targetOrder[a.kind], targetOrder[b.kind]),
			strings.Compare(a.name, b.name), strings.Compare(a.value, b.value))
	})
	ts = slices.Compact(ts)
	words := make([]string, len(ts))
	for i, t := range ts {
		words[i] = t.text()
	}
	if len(words) == 1 {
		return words[0]
	}
	return "(" + strings.Join(words, " OR ") + ")"
}

func (t fwTarget) text() string {
	switch t.kind {
	case "any", "all vms":
		return t.kind
	case "tag":
		if t.hasV {
			return fmt.Sprintf("tag %q = %q", t.name, t.value)
		}
		return fmt.Sprintf("tag %q", t.name)
	}
	return t.kind + " " + t.name
}

func (r fwRule) portsText() string {
	if r.allPorts {
		return "PORT all"
	}
	ports := slices.Clone(r.ports)
	slices.SortFunc(ports, func(a, b fwPort) int { return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.hi, b.hi)) })
	ports = slices.Compact(ports)
	if slices.ContainsFunc(ports, func(p fwPort) bool { return p.isRange }) {
		list := make([]string, len(ports))
		for i, p := range ports {
			list[i] = strconv.Itoa(p.lo)
			if p.isRange {
				list[i] += " - " + strconv.Itoa(p.hi)
			}
		}
		return "PORTS " + strings.Join(list, ", ")
	}
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = "PORT " + strconv.Itoa(p.lo)
	}
	return andList(list)
}

func (r fwRule) typesText() string {
	if r.allTypes {
		return "TYPE all"
	}
	types := slices.Clone(r.types)
	slices.SortFunc(types, func(a, b icmpType) int {
		return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.code, b.code))
	})
	types = slices.Compact(types)
	list := make([]string, len(types))
	for i, t := range types {
		list[i] = "TYPE " + strconv.Itoa(t.typ)
		if t.hasCode {
			list[i] += " CODE " + strconv.Itoa(t.code)
		}
	}
	return andList(list)
}

func andList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return "(" + strings.Join(items, " AND ") + ")"
}
