package gbsim

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// epoch is the creation time of resources seeded without one: fixed, so
// answers are deterministic.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	opts     Options
	servers  *simkit.Table[CloudServer]
	lbs      *simkit.Table[LoadBalancer]
	cips     *simkit.Table[CloudIP]
	groups   *simkit.Table[ServerGroup]
	policies *simkit.Table[FirewallPolicy]
	rules    *simkit.Table[FirewallRule]
	volumes  *simkit.Table[Volume]
	seq      int
	cipSeq   int // cloud IP addresses handed out
	// serverSeq counts the servers added, for their addresses.
	serverSeq int
	// defaultGroup is the default server group's ID, which new servers
	// join.
	defaultGroup string
	// settling settles load balancers (creating -> active, deleting ->
	// deleted), servers (creating -> active, deleting -> deleted), ACME
	// domains (pending -> valid) and volumes (creating -> detached,
	// attaching, detaching, deleting -> deleted).
	settling *simkit.Lifecycle
	// mapping settles cloud IPs being mapped onto load balancers.
	mapping *simkit.Lifecycle
	// retiring removes deleted load balancers, servers and volumes, which stay
	// listed for a while: its reads are list reads.
	retiring *simkit.Lifecycle
	now      func() time.Time
}

// numbering is where an account's counters start: its IDs (newID), its
// servers' addresses and its cloud IPs' addresses. The cloud's IDs and
// addresses are unique across its accounts, so each account counts in a
// part of the space of its own; the first account's starts at zero.
type numbering struct{ seq, serverSeq, cipSeq int }

// newState returns an account's state. Its Lifecycles settle with time
// too (Options.SettleAfter), on timers that take lock, the Server's state
// mutex.
func newState(opts Options, from numbering, lock sync.Locker) *state {
	st := &state{
		opts:      opts,
		seq:       from.seq,
		serverSeq: from.serverSeq,
		cipSeq:    from.cipSeq,
		servers:   simkit.NewTable[CloudServer](),
		lbs:       simkit.NewTable[LoadBalancer](),
		cips:      simkit.NewTable[CloudIP](),
		groups:    simkit.NewTable[ServerGroup](),
		policies:  simkit.NewTable[FirewallPolicy](),
		rules:     simkit.NewTable[FirewallRule](),
		volumes:   simkit.NewTable[Volume](),
		settling:  simkit.NewLifecycle(opts.ProvisioningReads).WithTime(opts.SettleAfter, lock),
		mapping:   simkit.NewLifecycle(mappingReads(opts.MappingReads)).WithTime(opts.SettleAfter, lock),
		retiring:  simkit.NewLifecycle(retiringReads(opts.DeletedReads)).WithTime(opts.SettleAfter, lock),
		now:       func() time.Time { return time.Now().UTC().Truncate(time.Second) },
	}
	st.seedDefaults()
	return st
}

// mappingReads is the Lifecycle reads of Options.MappingReads: 0 maps at
// once.
func mappingReads(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// retiringReads is the Lifecycle reads of Options.DeletedReads: listed
// for n list reads, a deleted resource is gone from the next; negative:
// gone at once.
func retiringReads(n int) int {
	if n < 0 {
		return -1
	}
	return n + 1
}

// newID returns an unused ID with prefix ("srv", "lba"...): five base-36
// characters that look random but follow from a counter.
func (st *state) newID(prefix string) string {
	const space = 36 * 36 * 36 * 36 * 36
	for {
		st.seq++
		n := (int64(st.seq)*7919 + 1234567) % space
		id := fmt.Sprintf("%s-%05s", prefix, strconv.FormatInt(n, 36))
		if !st.exists(id) {
			return id
		}
	}
}

func (st *state) exists(id string) bool {
	_, a := st.servers.Get(id)
	_, b := st.lbs.Get(id)
	_, c := st.cips.Get(id)
	_, d := st.groups.Get(id)
	_, e := st.policies.Get(id)
	_, f := st.rules.Get(id)
	_, g := st.volumes.Get(id)
	return a || b || c || d || e || f || g
}

// seedDefaults creates what every account has: the default server group
// with the default firewall policy, whose rule lets everything out. The
// first account's have fixed IDs (grp-sda44, fwp-j3654, fwr-k32l0);
// another account's are drawn from its own numbering.
func (st *state) seedDefaults() {
	grpID, fwpID, fwrID := "grp-sda44", "fwp-j3654", "fwr-k32l0"
	if st.seq != 0 {
		grpID, fwpID, fwrID = st.newID("grp"), st.newID("fwp"), st.newID("fwr")
	}
	grp := &ServerGroup{ID: grpID, Name: "default", Default: true, CreatedAt: epoch}
	st.groups.Put(grp.ID, grp)
	st.defaultGroup = grp.ID
	fwp := &FirewallPolicy{ID: fwpID, Name: "default", Default: true, ServerGroup: grp.ID, CreatedAt: epoch}
	st.policies.Put(fwp.ID, fwp)
	r := &FirewallRule{ID: fwrID, FirewallPolicy: fwp.ID, Destination: "any",
		Description: "Allow all outgoing traffic", CreatedAt: epoch}
	st.rules.Put(r.ID, r)
}

// listed counts a list read of resource id and reports whether it is
// listed: a deleted one is, for Options.DeletedReads list reads (or until
// its time is up), and the last read removes it.
func (st *state) listed(id string) bool { return !st.retiring.Read(id) }

// retire keeps a deleted resource listed for a while (listed), then
// removes it.
func (st *state) retire(id string, remove func()) { st.retiring.Start(id, remove) }

// Snapshot is a copy of the cloud's state, as /_sim/state serves it.
type Snapshot struct {
	Account          string           `json:"account"`
	Servers          []CloudServer    `json:"servers"`
	LoadBalancers    []LoadBalancer   `json:"load_balancers"`
	CloudIPs         []CloudIP        `json:"cloud_ips"`
	ServerGroups     []ServerGroup    `json:"server_groups"`
	FirewallPolicies []FirewallPolicy `json:"firewall_policies"`
	FirewallRules    []FirewallRule   `json:"firewall_rules"`
	Volumes          []Volume         `json:"volumes"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Account:          s.opts.Account,
		Servers:          simkit.CloneAll(s.st.servers.All(), (*CloudServer).clone),
		LoadBalancers:    simkit.CloneAll(s.st.lbs.All(), (*LoadBalancer).clone),
		CloudIPs:         simkit.CloneAll(s.st.cips.All(), (*CloudIP).clone),
		ServerGroups:     simkit.CloneAll(s.st.groups.All(), (*ServerGroup).clone),
		FirewallPolicies: simkit.CloneAll(s.st.policies.All(), (*FirewallPolicy).clone),
		FirewallRules:    simkit.CloneAll(s.st.rules.All(), func(r *FirewallRule) FirewallRule { return *r }),
		Volumes:          simkit.CloneAll(s.st.volumes.All(), (*Volume).clone),
	}
}

// Advance settles every pending load balancer, ACME domain, cloud IP
// mapping and volume (being created, attached, detached or deleted) now.
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.settling.Advance()
	s.st.mapping.Advance()
}

// PurgeDeleted removes the deleted load balancers, servers and volumes
// still listed.
func (s *Server) PurgeDeleted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.retiring.Advance()
}
