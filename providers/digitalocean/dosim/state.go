package dosim

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// created is the creation time of every resource: fixed, so responses are
// deterministic.
const created = "2024-01-01T00:00:00Z"

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	droplets     map[int]*Droplet
	nextDroplet  int
	lbs          map[string]*lbRecord
	lbOrder      []string // creation order
	lbSeq        int
	certs        map[string]*Certificate
	certOrder    []string
	tags         map[string]bool
	firewalls    map[string]*Firewall
	fwOrder      []string
	fwSeq        int
	now          func() time.Time
	dropletOrder []int
	actions      map[int]*Action
	actionOrder  []int
	nextAction   int
	nextSnapshot int
	// volumes and snapshots (of volumes and of droplets) by ID, in
	// creation order; volSeq and snapSeq number their UUIDs.
	volumes         *simkit.Table[Volume]
	snapshots       *simkit.Table[SnapshotRecord]
	volSeq, snapSeq int
	// provisioning makes new load balancers active; applying settles a
	// firewall's pending changes; acting completes droplet actions.
	provisioning, applying, acting *simkit.Lifecycle
}

// newState returns an empty cloud whose asynchronous work settles on its
// reads-th read and, with settleAfter > 0, that long after it started on a
// timer holding lock (the Server's mutex).
func newState(reads int, settleAfter time.Duration, lock sync.Locker) *state {
	return &state{
		provisioning: simkit.NewLifecycle(reads).WithTime(settleAfter, lock),
		applying:     simkit.NewLifecycle(reads).WithTime(settleAfter, lock),
		acting:       simkit.NewLifecycle(reads).WithTime(settleAfter, lock),
		actions:      map[int]*Action{},
		volumes:      simkit.NewTable[Volume](),
		snapshots:    simkit.NewTable[SnapshotRecord](),
		nextAction:   1_000_000_001,
		nextSnapshot: 2_000_000_001,
		droplets:     map[int]*Droplet{},
		nextDroplet:  100000001,
		lbs:          map[string]*lbRecord{},
		certs:        map[string]*Certificate{},
		tags:         map[string]bool{},
		firewalls:    map[string]*Firewall{},
		now:          time.Now,
	}
}

// uuid is a deterministic UUID for the n-th resource of kind k (0-15).
func uuid(k, n int) string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", n, k, n)
}

// Snapshot is a copy of the cloud's state, as /_sim/state serves it.
type Snapshot struct {
	Droplets      []Droplet      `json:"droplets"`
	LoadBalancers []LoadBalancer `json:"load_balancers"`
	Certificates  []Certificate  `json:"certificates"`
	Firewalls     []Firewall     `json:"firewalls"`
	Tags          []string       `json:"tags"`
	// Volumes, Snapshots (of volumes and droplets) and VolumeActions
	// (attach, detach, resize; oldest first).
	Volumes       []Volume         `json:"volumes"`
	Snapshots     []SnapshotRecord `json:"snapshots"`
	VolumeActions []Action         `json:"volume_actions"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		Droplets:      s.st.dropletList(),
		LoadBalancers: s.st.lbList(),
		Certificates:  []Certificate{},
		Firewalls:     []Firewall{},
		Tags:          s.st.tagList(),
		Volumes:       simkit.CloneAll(s.st.volumes.All(), (*Volume).clone),
		Snapshots:     simkit.CloneAll(s.st.snapshots.All(), (*SnapshotRecord).clone),
		VolumeActions: s.st.volumeActions(func(*Action) bool { return true }),
	}
	for _, id := range s.st.certOrder {
		snap.Certificates = append(snap.Certificates, *s.st.certs[id])
	}
	for _, id := range s.st.fwOrder {
		snap.Firewalls = append(snap.Firewalls, s.st.firewalls[id].clone())
	}
	return snap
}

func (st *state) tagList() []string {
	out := make([]string, 0, len(st.tags))
	for t := range st.tags {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// addTags makes tags exist.
func (st *state) addTags(tags []string) {
	for _, t := range tags {
		st.tags[t] = true
	}
}
