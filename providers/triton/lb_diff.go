package triton

import (
	"slices"
	"strings"

	"github.com/joyent/triton-go/network"
)

// metadataChanges compares the Moirai keys of an appliance's metadata with
// the desired ones: set holds the keys to write (new or different), del
// the managed keys the Service no longer asks for. Both empty: no write.
func metadataChanges(have, want map[string]string) (set map[string]string, del []string) {
	set = map[string]string{}
	for k, v := range want {
		if have[k] != v {
			set[k] = v
		}
	}
	for _, k := range moiraiKeys {
		if _, ok := want[k]; !ok {
			if _, ok := have[k]; ok {
				del = append(del, k)
			}
		}
	}
	return set, del
}

// ruleChanges returns the rules to create for the firewall to hold want,
// and the IDs of the rules in have (the appliance's own) to delete. Rules
// are compared as FWAPI may respell them: case and spacing aside.
func ruleChanges(have []*network.FirewallRule, want []string) (create, del []string) {
	kept := map[string]bool{}
	for _, r := range have {
		key := normalizeRule(r.Rule)
		if slices.ContainsFunc(want, func(w string) bool { return normalizeRule(w) == key }) && !kept[key] && r.Enabled {
			kept[key] = true
			continue
		}
		del = append(del, r.ID)
	}
	for _, w := range want {
		if !kept[normalizeRule(w)] {
			create = append(create, w)
			kept[normalizeRule(w)] = true
		}
	}
	return create, del
}

// normalizeRule is a rule's text lower-cased with single spaces.
func normalizeRule(rule string) string {
	return strings.Join(strings.Fields(strings.ToLower(rule)), " ")
}

// sameEntries reports whether a and b hold the same CNS entries, in any
// order.
func sameEntries(a, b []cnsEntry) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
