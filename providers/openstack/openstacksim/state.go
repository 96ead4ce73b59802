package openstacksim

import (
	"fmt"
	"hash/fnv"
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
	kVolume
	kSnapshot
	kAttachment
	kBDM
	// kLast is the last kind.
	kLast = kBDM
)

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	projectID string
	seq       map[kind]int
	// octaviaTicks counts load-balancer status changes (updated_at),
	// cinderTicks changes to volumes and snapshots.
	octaviaTicks, cinderTicks int

	servers        *simkit.Table[serverRec]
	flavors        *simkit.Table[Flavor]
	images         *simkit.Table[imageRec]
	networks       *simkit.Table[Network]
	subnets        *simkit.Table[subnetRec]
	ports          *simkit.Table[Port]
	routers        *simkit.Table[Router]
	floatingIPs    *simkit.Table[FloatingIP]
	securityGroups *simkit.Table[SecurityGroup]

	lbs       *simkit.Table[lbRec]
	listeners *simkit.Table[Listener]
	pools     *simkit.Table[Pool]
	members   *simkit.Table[Member]
	monitors  *simkit.Table[HealthMonitor]
	// pending settles load balancers in PENDING_* (see pend).
	pending *simkit.Lifecycle
	// serverTasks settles the servers' tasks (see nova_tasks.go).
	serverTasks *simkit.Lifecycle
	// volumes and volSnapshots are Cinder's; a volume holds its
	// attachments. volumeTasks settles their creates, deletes, extends,
	// attaches and detaches (see cinder_volume_api.go), by volume or
	// snapshot ID.
	volumes      *simkit.Table[volumeRec]
	volSnapshots *simkit.Table[snapshotRec]
	volumeTasks  *simkit.Lifecycle
	// failLBs are FailProvisioning references (IDs, names or "*").
	failLBs []*string
	// octaviaQuotaRows are the projects Octavia keeps a quota record for:
	// those that have created a load balancer.
	octaviaQuotaRows map[string]bool
	// goneServers maps the fixed IPs of deleted servers to their IDs (see
	// Cloud.LoadBalancers).
	goneServers map[string]string

	defaults Defaults
}

func newState(projectID string, provisioningReads int) *state {
	st := &state{
		projectID:        projectID,
		pending:          simkit.NewLifecycle(provisioningReads),
		serverTasks:      simkit.NewLifecycle(provisioningReads),
		volumeTasks:      simkit.NewLifecycle(provisioningReads),
		volumes:          simkit.NewTable[volumeRec](),
		volSnapshots:     simkit.NewTable[snapshotRec](),
		seq:              map[kind]int{},
		goneServers:      map[string]string{},
		octaviaQuotaRows: map[string]bool{},
		servers:          simkit.NewTable[serverRec](),
		flavors:          simkit.NewTable[Flavor](),
		images:           simkit.NewTable[imageRec](),
		networks:         simkit.NewTable[Network](),
		subnets:          simkit.NewTable[subnetRec](),
		ports:            simkit.NewTable[Port](),
		routers:          simkit.NewTable[Router](),
		floatingIPs:      simkit.NewTable[FloatingIP](),
		securityGroups:   simkit.NewTable[SecurityGroup](),
		lbs:              simkit.NewTable[lbRec](),
		listeners:        simkit.NewGroupedTable(func(l *Listener) string { return l.LoadBalancerID }),
		pools:            simkit.NewGroupedTable(func(p *Pool) string { return p.LoadBalancerID }),
		members:          simkit.NewGroupedTable(func(m *Member) string { return m.PoolID }),
		monitors:         simkit.NewGroupedTable(func(hm *HealthMonitor) string { return hm.PoolID }),
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
	// Volumes hold their attachments (Nova's and Cinder's alike).
	Volumes         []Volume         `json:"volumes"`
	VolumeSnapshots []VolumeSnapshot `json:"volume_snapshots"`
	VolumeTypes     []VolumeType     `json:"volume_types"`
	Defaults        Defaults         `json:"defaults"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	snap := Snapshot{Defaults: st.defaults}
	defer s.viewingServers()()
	for _, v := range st.servers.All() {
		snap.Servers = append(snap.Servers, s.serverView(v))
	}
	snap.Networks = simkit.CloneAll(st.networks.All(), (*Network).clone)
	for _, v := range st.subnets.All() {
		snap.Subnets = append(snap.Subnets, v.clone())
	}
	snap.Ports = simkit.CloneAll(st.ports.All(), (*Port).clone)
	snap.Routers = simkit.CloneAll(st.routers.All(), (*Router).clone)
	snap.FloatingIPs = simkit.CloneAll(st.floatingIPs.All(), (*FloatingIP).clone)
	snap.SecurityGroups = simkit.CloneAll(st.securityGroups.All(), (*SecurityGroup).clone)
	for _, v := range st.lbs.All() {
		snap.LoadBalancers = append(snap.LoadBalancers, s.lbView(v))
	}
	snap.Listeners = simkit.CloneAll(st.listeners.All(), (*Listener).clone)
	snap.Pools = simkit.CloneAll(st.pools.All(), (*Pool).clone)
	snap.Members = simkit.CloneAll(st.members.All(), (*Member).clone)
	snap.HealthMonitors = simkit.CloneAll(st.monitors.All(), (*HealthMonitor).clone)
	snap.Volumes = simkit.CloneAll(st.volumes.All(), func(v *volumeRec) Volume { return v.clone() })
	snap.VolumeSnapshots = simkit.CloneAll(st.volSnapshots.All(), func(sn *snapshotRec) VolumeSnapshot { return sn.clone() })
	snap.VolumeTypes = normalizeVolumeTypes(s.opts.VolumeTypes)
	return snap
}
