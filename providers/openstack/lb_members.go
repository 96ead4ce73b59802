package openstack

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/reconcile"
)

// This file is how the driver knows a pool's members. A pool of a big
// cluster has a member per node, and the driver keeps what it knows of
// every load balancer between syncs (see lb_known.go), so it keeps a
// digest of each pool's members, not the members: a sync only needs to
// know whether they are what the Service asks for, and a batch update
// replaces them all. Only with [LoadBalancer]
// provider-requires-serial-api-calls, where members are added and removed
// one by one, does it keep the members themselves.

// memberRecord is the part of an Octavia member the driver compares and
// acts on.
type memberRecord struct {
	ID           string `json:"id"`
	Address      string `json:"address"`
	ProtocolPort int    `json:"protocol_port"`
	MonitorPort  int    `json:"monitor_port"` // null: 0
}

// poolMembers is what the driver knows of one pool's members: their
// digest (memberSum), and, when it writes members one by one, the members.
type poolMembers struct {
	sum  string
	kept bool
	list []memberRecord // when kept
}

// newPoolMembers summarizes members read from Octavia, keeping them when
// keep is set.
func newPoolMembers(members []memberRecord, keep bool) poolMembers {
	lines := make([]memberLine, len(members))
	for i, m := range members {
		lines[i] = memberLine{addr: normalizeIP(m.Address), port: m.ProtocolPort, monitorPort: m.MonitorPort}
	}
	pm := poolMembers{sum: memberSum(lines)}
	if keep {
		pm.list, pm.kept = members, true
	}
	return pm
}

// desiredPoolMembers is what the driver knows of a pool once a batch
// update to want has been applied.
func desiredPoolMembers(want []memberSpec) poolMembers {
	return poolMembers{sum: memberSum(specLines(want))}
}

// memberLine is what a member's digest covers: what planMembers compares.
type memberLine struct {
	addr              string
	port, monitorPort int
}

func specLines(members []memberSpec) []memberLine {
	lines := make([]memberLine, len(members))
	for i, m := range members {
		lines[i] = memberLine{addr: m.Address, port: m.Port, monitorPort: m.MonitorPort}
	}
	return lines
}

// memberSum is a digest of members (address, port, monitor port) in any
// order; duplicates count. Two pools have the same sum exactly when
// planMembers finds nothing to change between them. It sorts lines.
func memberSum(lines []memberLine) string {
	slices.SortFunc(lines, func(a, b memberLine) int {
		return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(a.port, b.port), cmp.Compare(a.monitorPort, b.monitorPort))
	})
	h := sha256.New()
	buf := make([]byte, 0, 64)
	for _, l := range lines {
		buf = append(buf[:0], l.addr...)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(l.port), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(l.monitorPort), 10)
		buf = append(buf, '\n')
		h.Write(buf)
	}
	return string(h.Sum(nil))
}

// compareMembers orders members by address, then port.
func compareMembers(a, b memberSpec) int {
	return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
}

// planMembers compares a pool's members with the desired ones by address
// and port, and their monitor port: nothing when they match, else one
// batch update, or with serial the members to delete and create one by
// one.
func planMembers(have poolMembers, w *listenerSpec, poolID string, serial bool) []action {
	if have.sum == memberSum(specLines(w.Pool.Members)) {
		return nil
	}
	if !serial || !have.kept && have.sum != "" {
		// A batch replaces them all (also when only their digest is known).
		return []action{{kind: actBatchMembers, want: w, poolID: poolID}}
	}
	actual := make([]memberSpec, len(have.list))
	ids := map[string]string{}
	for i, m := range have.list {
		actual[i] = memberSpec{Address: normalizeIP(m.Address), Port: m.ProtocolPort, MonitorPort: m.MonitorPort}
		ids[actual[i].key()] = m.ID
	}
	diff, err := reconcile.Diff(w.Pool.Members, actual, memberSpec.key, func(d, a memberSpec) bool { return d.MonitorPort == a.MonitorPort })
	if err != nil {
		// Duplicate members (Octavia refuses them): a batch fixes it.
		return []action{{kind: actBatchMembers, want: w, poolID: poolID}}
	}
	var plan []action
	for _, m := range diff.Delete {
		plan = append(plan, action{kind: actDeleteMember, want: w, poolID: poolID, memberID: ids[m.key()]})
	}
	for _, c := range diff.Update {
		plan = append(plan, action{kind: actDeleteMember, want: w, poolID: poolID, memberID: ids[c.Actual.key()]})
	}
	for _, m := range append(diff.Create, changedDesired(diff.Update)...) {
		plan = append(plan, action{kind: actCreateMember, want: w, poolID: poolID, member: &m})
	}
	return plan
}

func changedDesired(changes []reconcile.Change[memberSpec]) []memberSpec {
	out := make([]memberSpec, len(changes))
	for i, c := range changes {
		out[i] = c.Desired
	}
	return out
}
