package openstack

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
)

// octaviaLB is one Octavia load balancer as the driver sees it: the load
// balancer and, once it is ACTIVE (or in ERROR), its children and its
// floating IP, read or known from earlier syncs (see lb_known.go). Its
// slices and maps are never modified once set, only replaced: the
// pipeline's shared list hands out shallow copies, and the driver shares
// them with what it knows.
type octaviaLB struct {
	// LB is the load balancer without its listener and pool references
	// (see shape) and timestamps (see updated).
	LB loadbalancers.LoadBalancer
	// shape names the listeners and pools the load balancer lists, and
	// updated is its updated_at as Octavia wrote it: any change to the
	// load balancer or a child changes it.
	shape, updated string
	// loaded: Listeners, Pools, Members and Monitors are known.
	loaded    bool
	Listeners []listeners.Listener
	Pools     []pools.Pool                // without their member references
	Members   map[string]poolMembers      // by pool ID
	Monitors  map[string]monitors.Monitor // by pool ID
	// fipLoaded: FIP is known (nil: the VIP has none).
	fipLoaded bool
	FIP       *floatingips.FloatingIP
}

// actionKind is one Octavia write. Each makes the load balancer
// PENDING_UPDATE, so Update applies one per sync.
type actionKind int

const (
	actDeleteListener actionKind = iota
	actCreateListener
	actDeletePool
	actUpdateListener
	actCreatePool
	actUpdatePool
	actBatchMembers
	actCreateMember
	actDeleteMember
	actDeleteMonitor
	actCreateMonitor
	actUpdateMonitor
)

// action is one write planChanges asks for.
type action struct {
	kind actionKind
	// want is the desired listener (with its pool) the action serves.
	want *listenerSpec
	// IDs of the existing objects acted on.
	listenerID, poolID, memberID, monitorID string
	// reusePoolID: a new listener takes this orphaned pool as its default
	// pool, keeping its members and monitor (a port renumbered).
	reusePoolID string
	member      *memberSpec
}

func (a action) String() string {
	key := ""
	if a.want != nil {
		key = " " + a.want.key()
	}
	names := map[actionKind]string{
		actDeleteListener: "delete listener " + a.listenerID, actCreateListener: "create listener" + key,
		actDeletePool: "delete pool " + a.poolID, actUpdateListener: "update listener" + key,
		actCreatePool: "create pool for listener" + key, actUpdatePool: "update pool of listener" + key,
		actBatchMembers: "replace members of listener" + key, actCreateMember: "add a member to listener" + key,
		actDeleteMember: "remove a member from listener" + key, actDeleteMonitor: "delete health monitor of listener" + key,
		actCreateMonitor: "create health monitor for listener" + key, actUpdateMonitor: "update health monitor of listener" + key,
	}
	if a.reusePoolID != "" {
		return names[a.kind] + " reusing pool " + a.reusePoolID
	}
	return names[a.kind]
}

// planChanges lists the writes that turn have into want, in the order to
// apply them: listeners that go, listeners that come (taking over an
// orphaned pool of the same protocol when there is one), orphaned pools,
// then per listener its settings, pool, members and monitor. Only what
// differs is listed: an up-to-date load balancer gives an empty plan.
// serial: members one by one ([LoadBalancer]
// provider-requires-serial-api-calls) instead of one batch per pool.
func planChanges(have *octaviaLB, want []listenerSpec, f octaviaFeatures, serial bool) []action {
	byKey := map[string]*listeners.Listener{}
	for i := range have.Listeners {
		l := &have.Listeners[i]
		byKey[listenerKey(l.Protocol, l.ProtocolPort)] = l
	}
	poolByID := map[string]*pools.Pool{}
	for i := range have.Pools {
		poolByID[have.Pools[i].ID] = &have.Pools[i]
	}
	wantKeys := map[string]bool{}
	for i := range want {
		wantKeys[want[i].key()] = true
	}
	var plan []action
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		if !wantKeys[k] {
			plan = append(plan, action{kind: actDeleteListener, listenerID: byKey[k].ID})
		}
	}
	orphans := orphanPools(have)
	reused := map[string]bool{}
	for i := range want {
		w := &want[i]
		if byKey[w.key()] != nil {
			continue
		}
		a := action{kind: actCreateListener, want: w}
		if p := pickOrphan(orphans, reused, w, have); p != "" {
			a.reusePoolID, reused[p] = p, true
		}
		plan = append(plan, a)
	}
	for _, p := range orphans {
		if !reused[p.ID] {
			plan = append(plan, action{kind: actDeletePool, poolID: p.ID})
		}
	}
	for i := range want {
		w := &want[i]
		l := byKey[w.key()]
		if l == nil {
			continue
		}
		if len(listenerChanges(l, w, f)) > 0 {
			plan = append(plan, action{kind: actUpdateListener, want: w, listenerID: l.ID})
		}
		plan = append(plan, planPool(have, l, poolByID[l.DefaultPoolID], w, serial)...)
	}
	return plan
}

// planPool lists the writes for listener l's default pool p (nil: none).
func planPool(have *octaviaLB, l *listeners.Listener, p *pools.Pool, w *listenerSpec, serial bool) []action {
	switch {
	case p == nil:
		return []action{{kind: actCreatePool, want: w, listenerID: l.ID}}
	case p.Protocol != w.Pool.Protocol:
		// The protocol of a pool cannot change: replace it.
		return []action{{kind: actDeletePool, want: w, poolID: p.ID}}
	}
	var plan []action
	if p.LBMethod != w.Pool.Method || p.Persistence.Type != w.Pool.Persistence {
		plan = append(plan, action{kind: actUpdatePool, want: w, poolID: p.ID})
	}
	// A monitor of the wrong type goes before the members change: members
	// move their monitor port between the health check node port and
	// their own, and the old monitor would probe the wrong one.
	remove, add := planMonitor(have.Monitors, p, w)
	plan = append(plan, remove...)
	plan = append(plan, planMembers(have.Members[p.ID], w, p.ID, serial)...)
	return append(plan, add...)
}

// planMonitor compares the pool's health monitor with the desired one: a
// monitor to delete (none wanted, or of another type) in remove, one to
// create or update in add.
func planMonitor(have map[string]monitors.Monitor, p *pools.Pool, w *listenerSpec) (remove, add []action) {
	m, exists := have[p.ID]
	want := w.Pool.Monitor
	if exists && (want == nil || m.Type != want.Type) {
		remove = []action{{kind: actDeleteMonitor, want: w, poolID: p.ID, monitorID: m.ID}}
		exists = false
	}
	switch {
	case want == nil:
	case !exists:
		add = []action{{kind: actCreateMonitor, want: w, poolID: p.ID}}
	case !sameMonitor(&m, want):
		add = []action{{kind: actUpdateMonitor, want: w, poolID: p.ID, monitorID: m.ID}}
	}
	return remove, add
}

func sameMonitor(m *monitors.Monitor, w *monitorSpec) bool {
	same := m.Delay == w.Delay && m.Timeout == w.Timeout && m.MaxRetries == w.MaxRetries && m.MaxRetriesDown == w.MaxRetriesDown
	if w.Type == "HTTP" || w.Type == "HTTPS" {
		same = same && cmp.Or(m.URLPath, "/") == w.URLPath && cmp.Or(m.HTTPMethod, "GET") == w.HTTPMethod &&
			cmp.Or(m.ExpectedCodes, "200") == w.ExpectedCodes
	}
	return same
}

// listenerChanges names the settings of l that differ from w.
func listenerChanges(l *listeners.Listener, w *listenerSpec, f octaviaFeatures) []string {
	var out []string
	if l.ConnLimit != w.ConnLimit {
		out = append(out, "connection limit")
	}
	if t := w.Timeouts; t != nil && *t != (listenerTimeouts{l.TimeoutClientData, l.TimeoutMemberConnect, l.TimeoutMemberData, l.TimeoutTCPInspect}) {
		out = append(out, "timeouts")
	}
	if f.vipACL && !slices.Equal(normalizeCIDRs(l.AllowedCIDRs), w.AllowedCIDRs) {
		out = append(out, "allowed CIDRs")
	}
	if httpListener(w.Protocol) && (l.InsertHeaders[headerXForwardedFor] == "true") != w.XFF {
		out = append(out, "X-Forwarded-For")
	}
	if w.Protocol == "TERMINATED_HTTPS" && l.DefaultTlsContainerRef != w.TLSRef {
		out = append(out, "TLS container")
	}
	return out
}

func httpListener(protocol string) bool { return protocol == "HTTP" || protocol == "TERMINATED_HTTPS" }

// normalizeCIDRs sorts a listener's allowed_cidrs and maps "everyone" (none,
// or a /0) to nil, as OCCM writes 0.0.0.0/0 where the CCM writes nothing.
func normalizeCIDRs(cidrs []string) []string {
	var out []string
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			out = append(out, c)
			continue
		}
		if p.Bits() == 0 {
			return nil
		}
		out = append(out, p.Masked().String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func normalizeIP(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.String()
	}
	return s
}

// orphanPools are the pools no listener uses as its default pool, sorted
// by ID.
func orphanPools(have *octaviaLB) []*pools.Pool {
	used := map[string]bool{}
	for _, l := range have.Listeners {
		used[l.DefaultPoolID] = true
	}
	var out []*pools.Pool
	for i := range have.Pools {
		if p := &have.Pools[i]; !used[p.ID] {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *pools.Pool) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// pickOrphan chooses an orphaned pool for a new listener: one of the
// desired protocol, preferring one whose members already match.
func pickOrphan(orphans []*pools.Pool, reused map[string]bool, w *listenerSpec, have *octaviaLB) string {
	best := ""
	for _, p := range orphans {
		if reused[p.ID] || p.Protocol != w.Pool.Protocol {
			continue
		}
		if len(planMembers(have.Members[p.ID], w, p.ID, false)) == 0 {
			return p.ID
		}
		if best == "" {
			best = p.ID
		}
	}
	return best
}

// describePlan is the plan for logs.
func describePlan(plan []action) string {
	parts := make([]string, len(plan))
	for i, a := range plan {
		parts[i] = a.String()
	}
	return fmt.Sprintf("[%s]", strings.Join(parts, "; "))
}
