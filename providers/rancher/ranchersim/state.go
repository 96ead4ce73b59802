package ranchersim

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// ID prefixes: Cattle writes a resource's ID as "1" (the API version),
// its type's prefix and its database ID.
const (
	prefixHost      = "1h"
	prefixIPAddress = "1ia"
	prefixStack     = "1st"
	prefixService   = "1s"
	prefixInstance  = "1i"
	// prefixCertificate: Cattle's certificates are 1c<n>.
	prefixCertificate = "1c"
	// Volumes, storage drivers, storage pools and mounts: the prefix
	// is the type's first letter and its capitals (gdapi's
	// TypeIdFormatter).
	prefixVolume        = "1v"
	prefixStorageDriver = "1sd"
	prefixStoragePool   = "1sp"
	prefixMount         = "1m"
)

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	opts     Options
	hosts    *simkit.Table[Host]
	stacks   *simkit.Table[Stack]
	services *simkit.Table[Service]
	certs    *simkit.Table[Certificate]
	volumes  *simkit.Table[Volume]
	drivers  *simkit.Table[StorageDriver]
	pools    *simkit.Table[StoragePool]
	mounts   *simkit.Table[Mount]
	// volumeAgents are the storage drivers' plugins running on the
	// hosts (StartVolumePlugin), by driver name: one deletes a removed
	// volume's data.
	volumeAgents map[string][]volumeAgent
	settings     []Setting
	// life moves resources out of their transitioning states: each
	// pending resource settles on its ProvisioningReads-th read, on
	// Advance, or, with Options.SettleAfter, that long after it started.
	life *simkit.Lifecycle
	// purge drops removed hosts after as many reads (at least
	// DefaultProvisioningReads), on the Advance after they were removed,
	// or SettleAfter after they were.
	purge *simkit.Lifecycle
	seq   map[string]int
}

// newState is an empty cloud; mu is the Server's state lock, which the
// lifecycles' timers take.
func newState(opts Options, mu sync.Locker) *state {
	return &state{
		opts:     opts,
		hosts:    simkit.NewTable[Host](),
		stacks:   simkit.NewTable[Stack](),
		services: simkit.NewTable[Service](),
		certs:    simkit.NewTable[Certificate](),
		volumes:  simkit.NewTable[Volume](),
		drivers:  simkit.NewTable[StorageDriver](),
		pools:    simkit.NewTable[StoragePool](),
		mounts:   simkit.NewTable[Mount](),

		volumeAgents: map[string][]volumeAgent{},
		settings:     defaultSettings(opts),
		life:         simkit.NewLifecycle(opts.ProvisioningReads).WithTime(opts.SettleAfter, mu),
		purge:        simkit.NewLifecycle(max(opts.ProvisioningReads, 0)).WithTime(opts.SettleAfter, mu),
		seq:          map[string]int{},
	}
}

// newID returns the next unused ID with prefix ("1h", "1s"...).
func (st *state) newID(prefix string) string {
	for {
		st.seq[prefix]++
		id := prefix + strconv.Itoa(st.seq[prefix])
		if !st.exists(id) {
			return id
		}
	}
}

// claimID makes sure the counter of prefix never hands out id, an ID a
// test or scenario chose.
func (st *state) claimID(prefix, id string) {
	if n, err := strconv.Atoi(id[len(prefix):]); err == nil && len(id) > len(prefix) && id[:len(prefix)] == prefix {
		st.seq[prefix] = max(st.seq[prefix], n)
	}
}

// admit gives a resource being added its ID, a new one with prefix
// unless a test or scenario chose one (which must be free, or it panics,
// as a test's mistake), and its creation time, now unless set.
func (st *state) admit(prefix string, id *string, created *time.Time) {
	if *id == "" {
		*id = st.newID(prefix)
	} else if st.exists(*id) {
		panic(fmt.Sprintf("ranchersim: ID %s is taken", *id))
	}
	st.claimID(prefix, *id)
	if created.IsZero() {
		*created = st.now()
	}
}

// retire removes a resource: removing, then removed, with its removed
// timestamp; removed runs then, if set.
func (st *state) retire(id string, state *string, removedAt **time.Time, removed func()) {
	st.transition(id, func(to string) {
		*state = to
		if to == StateRemoved {
			t := st.now()
			*removedAt = &t
			if removed != nil {
				removed()
			}
		}
	}, StateRemoving, StateRemoved)
}

func (st *state) exists(id string) bool {
	_, a := st.hosts.Get(id)
	_, b := st.stacks.Get(id)
	_, c := st.services.Get(id)
	_, d := st.certs.Get(id)
	_, e := st.volumes.Get(id)
	_, f := st.drivers.Get(id)
	_, g := st.pools.Get(id)
	_, h := st.mounts.Get(id)
	return a || b || c || d || e || f || g || h
}

// clonePtr is a copy of *p, nil for nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return new(*p)
}

// now is the server's clock, to the second, in UTC.
func (st *state) now() time.Time { return st.opts.Now().UTC().Truncate(time.Second) }

// uuidFor is the resource's uuid: a version 4 UUID derived from its ID, so
// answers are deterministic.
func uuidFor(id string) string {
	h := sha256.Sum256([]byte("ranchersim/" + id))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// transitioning is the transitioning field of a resource in state: "yes"
// in the states that settle by themselves (the -ing ones), "no"
// otherwise.
func transitioning(state string) string {
	if isTransitioning(state) {
		return "yes"
	}
	return "no"
}

// transitioningMessage is the transitioningMessage of a resource in
// state: Cattle's default, "In Progress", while it is transitioning
// (DefaultObjectMetaDataManager.getTransitionFields, ObjectMetaDataManager.
// TRANSITIONING_MESSAGE_DEFAULT_FIELD), null otherwise.
func transitioningMessage(state string) *string {
	if isTransitioning(state) {
		return ptr(messageInProgress)
	}
	return nil
}

// messageInProgress is Cattle's transitioningMessage of a resource whose
// process has said nothing more.
const messageInProgress = "In Progress"

func isTransitioning(state string) bool {
	switch state {
	case StateRegistering, StateActivating, StateDeactivating, StateUpdatingActive, StateUpdatingInactive,
		StateUpgrading, StateFinishingUpgrade, StateRollingBack, StateRestarting, StateCancelingUpgrade, StateRemoving,
		StatePurging:
		return true
	}
	return false
}

// Snapshot is a copy of the cloud's state, as /_sim/state serves it.
type Snapshot struct {
	Project  string    `json:"project"`
	Hosts    []Host    `json:"hosts"`
	Stacks   []Stack   `json:"stacks"`
	Services []Service `json:"services"`
	// Certificates leave out their private keys.
	Certificates []Certificate `json:"certificates"`
	Settings     []Setting     `json:"settings"`
	// Volumes, StorageDrivers, StoragePools and Mounts: the volumes
	// (removed ones until purged) and what they live in.
	Volumes        []Volume        `json:"volumes,omitempty"`
	StorageDrivers []StorageDriver `json:"storageDrivers,omitempty"`
	StoragePools   []StoragePool   `json:"storagePools,omitempty"`
	Mounts         []Mount         `json:"mounts,omitempty"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Project:        s.opts.Project,
		Hosts:          simkit.CloneAll(s.st.hosts.All(), (*Host).clone),
		Stacks:         simkit.CloneAll(s.st.stacks.All(), (*Stack).clone),
		Services:       simkit.CloneAll(s.st.services.All(), (*Service).clone),
		Certificates:   simkit.CloneAll(s.st.certs.All(), (*Certificate).clone),
		Settings:       append([]Setting(nil), s.st.settings...),
		Volumes:        simkit.CloneAll(s.st.volumes.All(), (*Volume).clone),
		StorageDrivers: simkit.CloneAll(s.st.drivers.All(), (*StorageDriver).clone),
		StoragePools:   simkit.CloneAll(s.st.pools.All(), s.st.poolCopy),
		Mounts:         simkit.CloneAll(s.st.mounts.All(), (*Mount).clone),
	}
}

// Advance settles every resource in a transitioning state now (one step:
// a removed host is purged by the next Advance).
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.purge.Advance()
	s.st.life.Advance()
}

// read counts a read of resource id (a GET of it, or a list page holding
// it), which may settle it.
func (st *state) read(id string) {
	st.life.Read(id)
	st.purge.Read(id)
}
