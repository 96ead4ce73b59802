package simkit

import (
	"slices"
	"sync"
	"time"
)

// DefaultProvisioningReads is how many reads of a pending resource it
// takes to settle when a simulator's Options leave it 0.
const DefaultProvisioningReads = 2

// Lifecycle is how a simulator's asynchronous resources settle (a load
// balancer being provisioned, a machine booting, a change being applied):
// each pending resource settles on its N-th read, or at once on Advance,
// and, when the Lifecycle keeps time (WithTime), a fixed time after it
// started, as the real cloud moves on whether or not anyone looks. Tests
// leave time off, so that they need no sleep and every run is the same.
//
// A Lifecycle is not safe for concurrent use: the simulator's state lock
// guards it, as it guards the resources whose settle functions it runs.
// Its timers take that lock (the one WithTime names) before they settle
// anything.
type Lifecycle struct {
	reads   int
	after   time.Duration
	lock    sync.Locker
	pending []*pendingResource // in Start order
}

type pendingResource struct {
	id     string
	reads  int
	settle func()
	timer  *time.Timer // nil without time
}

// NewLifecycle returns the Lifecycle of resources that settle on their
// reads-th read: 0 means DefaultProvisioningReads, a negative value
// settles every resource as soon as it starts (the simulator's
// Options.ProvisioningReads, as its doc comment says).
func NewLifecycle(reads int) *Lifecycle {
	if reads == 0 {
		reads = DefaultProvisioningReads
	}
	return &Lifecycle{reads: reads}
}

// WithTime makes every resource that starts from now on also settle after
// d (Common.SettleAfter), on a timer that holds lock (the simulator's
// state lock) while it settles. d <= 0 leaves time off. It returns l.
func (l *Lifecycle) WithTime(d time.Duration, lock sync.Locker) *Lifecycle {
	if d > 0 && lock != nil {
		l.after, l.lock = d, lock
	}
	return l
}

// Reads is how many reads settle a resource; negative: none, it settles
// at once.
func (l *Lifecycle) Reads() int { return l.reads }

// Start makes resource id pending, with no reads counted and its time
// starting now (again, if it was pending already); settle runs, once,
// when it settles. With a negative Reads it settles now.
func (l *Lifecycle) Start(id string, settle func()) {
	l.Stop(id)
	if l.reads < 0 {
		settle()
		return
	}
	p := &pendingResource{id: id, settle: settle}
	if l.after > 0 {
		p.timer = time.AfterFunc(l.after, func() { l.expire(p) })
	}
	l.pending = append(l.pending, p)
}

// expire settles p when its time is up, unless a read, Advance or Stop
// got there first.
func (l *Lifecycle) expire(p *pendingResource) {
	l.lock.Lock()
	defer l.lock.Unlock()
	if l.remove(p) {
		p.settle()
	}
}

// Read counts a read of resource id (a GET of it, or a list page holding
// it) and settles it on the Reads-th; it reports whether id settled.
// Reading a resource that is not pending does nothing.
func (l *Lifecycle) Read(id string) (settled bool) {
	i := l.index(id)
	if i < 0 {
		return false
	}
	p := l.pending[i]
	if p.reads++; p.reads < l.reads {
		return false
	}
	l.remove(p)
	p.settle()
	return true
}

// Pending reports whether resource id has yet to settle.
func (l *Lifecycle) Pending(id string) bool { return l.index(id) >= 0 }

// Stop forgets resource id without settling it: it was deleted, or set to
// a final state by hand.
func (l *Lifecycle) Stop(id string) {
	if i := l.index(id); i >= 0 {
		l.remove(l.pending[i])
	}
}

// Advance settles every pending resource now, in the order they started.
// One a settle function stops is not settled; one it starts (again) stays
// pending.
func (l *Lifecycle) Advance() {
	for _, p := range slices.Clone(l.pending) {
		if l.remove(p) {
			p.settle()
		}
	}
}

// remove takes p off the pending list and stops its timer; it reports
// whether p was pending.
func (l *Lifecycle) remove(p *pendingResource) bool {
	i := slices.Index(l.pending, p)
	if i < 0 {
		return false
	}
	l.pending = slices.Delete(l.pending, i, i+1)
	if p.timer != nil {
		p.timer.Stop()
	}
	return true
}

func (l *Lifecycle) index(id string) int {
	return slices.IndexFunc(l.pending, func(p *pendingResource) bool { return p.id == id })
}
