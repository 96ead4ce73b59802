package openstacksim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Timestamps of every resource: fixed, so responses are deterministic.
// Nova and Neutron write RFC 3339 with a zone; Octavia writes none. A load
// balancer's updated_at moves on by a second at each change of its
// provisioning status (see state.octaviaTick), as Octavia's does, so
// clients can tell it changed.
const (
	createdTS        = "2024-01-01T00:00:00Z"
	updatedTS        = "2024-01-01T00:00:01Z"
	octaviaCreatedTS = "2024-01-01T00:00:00"
	octaviaUpdatedTS = "2024-01-01T00:00:01"
)

// kind numbers resource kinds in deterministic IDs.
type kind int

const (
	kNetwork kind = iota + 1
	kSubnet
	kPort
	kRouter
	kFloatingIP
	kSecurityGroup
	kSecurityGroupRule
	kServer
	kLoadBalancer
	kListener
	kPool
	kMember
	kHealthMonitor
	kImage
)

// table is a map that remembers insertion order. A grouped table also
// indexes its values by a parent ID that never changes (a member's pool, a
// listener's load balancer), so that children are found without scanning
// every value: at bench scale the members table holds 200,000 rows.
type table[T any] struct {
	m     map[string]*T
	order []string
	// group, when set, is a value's parent ID; groups holds each parent's
	// child IDs in insertion order.
	group  func(*T) string
	groups map[string][]string
}

func newTable[T any]() *table[T] { return &table[T]{m: map[string]*T{}} }

// newGroupedTable is a table indexed by group.
func newGroupedTable[T any](group func(*T) string) *table[T] {
	return &table[T]{m: map[string]*T{}, group: group, groups: map[string][]string{}}
}

func (t *table[T]) get(id string) (*T, bool) {
	v, ok := t.m[id]
	return v, ok
}

func (t *table[T]) put(id string, v *T) {
	if _, ok := t.m[id]; !ok {
		t.order = append(t.order, id)
		if t.group != nil {
			g := t.group(v)
			t.groups[g] = append(t.groups[g], id)
		}
	}
	t.m[id] = v
}

func (t *table[T]) del(id string) {
	v, ok := t.m[id]
	if !ok {
		return
	}
	delete(t.m, id)
	t.order = deleteID(t.order, id)
	if t.group != nil {
		g := t.group(v)
		if t.groups[g] = deleteID(t.groups[g], id); len(t.groups[g]) == 0 {
			delete(t.groups, g)
		}
	}
}

func deleteID(ids []string, id string) []string {
	if i := slices.Index(ids, id); i >= 0 {
		return slices.Delete(ids, i, i+1)
	}
	return ids
}

// all returns the values in insertion order.
func (t *table[T]) all() []*T { return t.values(t.order) }

// in returns the values of a grouped table whose parent is group, in
// insertion order.
func (t *table[T]) in(group string) []*T { return t.values(t.groups[group]) }

func (t *table[T]) values(ids []string) []*T {
	out := make([]*T, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.m[id])
	}
	return out
}

func (t *table[T]) len() int { return len(t.m) }

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	projectID string
	seq       map[kind]int
	// octaviaTicks counts load-balancer status changes (updated_at).
	octaviaTicks int

	servers        *table[serverRec]
	flavors        *table[Flavor]
	images         *table[imageRec]
	networks       *table[Network]
	subnets        *table[subnetRec]
	ports          *table[Port]
	routers        *table[Router]
	floatingIPs    *table[FloatingIP]
	securityGroups *table[SecurityGroup]

	lbs       *table[lbRec]
	listeners *table[Listener]
	pools     *table[Pool]
	members   *table[Member]
	monitors  *table[HealthMonitor]
	// pending settles load balancers in PENDING_* (see pend).
	pending *simkit.Lifecycle
	// failLBs are FailProvisioning references (IDs, names or "*").
	failLBs []*string
	// goneServers maps the fixed IPs of deleted servers to their IDs (see
	// Cloud.LoadBalancers).
	goneServers map[string]string

	defaults Defaults
}

func newState(projectID string, provisioningReads int) *state {
	st := &state{
		projectID:      projectID,
		pending:        simkit.NewLifecycle(provisioningReads),
		seq:            map[kind]int{},
		goneServers:    map[string]string{},
		servers:        newTable[serverRec](),
		flavors:        newTable[Flavor](),
		images:         newTable[imageRec](),
		networks:       newTable[Network](),
		subnets:        newTable[subnetRec](),
		ports:          newTable[Port](),
		routers:        newTable[Router](),
		floatingIPs:    newTable[FloatingIP](),
		securityGroups: newTable[SecurityGroup](),
		lbs:            newTable[lbRec](),
		listeners:      newGroupedTable(func(l *Listener) string { return l.LoadBalancerID }),
		pools:          newGroupedTable(func(p *Pool) string { return p.LoadBalancerID }),
		members:        newGroupedTable(func(m *Member) string { return m.PoolID }),
		monitors:       newGroupedTable(func(hm *HealthMonitor) string { return hm.PoolID }),
	}
	st.addCatalog()
	return st
}

// octaviaTick is the updated_at of a load balancer changing now: one
// second after the previous change of any load balancer.
func (st *state) octaviaTick() string {
	st.octaviaTicks++
	return octaviaEpoch.Add(time.Duration(st.octaviaTicks) * time.Second).Format(octaviaTSLayout)
}

var octaviaEpoch, _ = time.Parse(octaviaTSLayout, octaviaUpdatedTS)

const octaviaTSLayout = "2006-01-02T15:04:05"

// newID returns the next deterministic UUID for kind k.
func (st *state) newID(k kind) string {
	st.seq[k]++
	return uuid(k, st.seq[k])
}

// uuid is a deterministic UUID for the n-th resource of kind k.
func uuid(k kind, n int) string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", n, int(k), n)
}

// hexID is a Keystone-style ID (32 hex digits) derived from parts.
func hexID(parts ...string) string {
	h := fnv.New128a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Snapshot is a copy of the cloud's state, as /_sim/state serves it.
type Snapshot struct {
	Servers        []NovaServer    `json:"servers"`
	Networks       []Network       `json:"networks"`
	Subnets        []Subnet        `json:"subnets"`
	Ports          []Port          `json:"ports"`
	Routers        []Router        `json:"routers"`
	FloatingIPs    []FloatingIP    `json:"floatingips"`
	SecurityGroups []SecurityGroup `json:"security_groups"`
	LoadBalancers  []LoadBalancer  `json:"loadbalancers"`
	Listeners      []Listener      `json:"listeners"`
	Pools          []Pool          `json:"pools"`
	Members        []Member        `json:"members"`
	HealthMonitors []HealthMonitor `json:"healthmonitors"`
	Defaults       Defaults        `json:"defaults"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	snap := Snapshot{Defaults: st.defaults}
	for _, v := range st.servers.all() {
		snap.Servers = append(snap.Servers, s.serverView(v))
	}
	snap.Networks = clones(st.networks.all(), Network.clone)
	for _, v := range st.subnets.all() {
		snap.Subnets = append(snap.Subnets, v.clone())
	}
	snap.Ports = clones(st.ports.all(), Port.clone)
	snap.Routers = clones(st.routers.all(), Router.clone)
	snap.FloatingIPs = clones(st.floatingIPs.all(), FloatingIP.clone)
	snap.SecurityGroups = clones(st.securityGroups.all(), SecurityGroup.clone)
	for _, v := range st.lbs.all() {
		snap.LoadBalancers = append(snap.LoadBalancers, s.lbView(v))
	}
	snap.Listeners = clones(st.listeners.all(), Listener.clone)
	snap.Pools = clones(st.pools.all(), Pool.clone)
	snap.Members = clones(st.members.all(), Member.clone)
	snap.HealthMonitors = clones(st.monitors.all(), HealthMonitor.clone)
	return snap
}

func clones[T any](in []*T, clone func(T) T) []T {
	out := make([]T, 0, len(in))
	for _, v := range in {
		out = append(out, clone(*v))
	}
	return out
}
