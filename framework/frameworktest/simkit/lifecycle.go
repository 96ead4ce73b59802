package simkit

import "slices"

// DefaultProvisioningReads is how many reads of a pending resource it
// takes to settle when a simulator's Options leave it 0.
const DefaultProvisioningReads = 2

// Lifecycle is how a simulator's asynchronous resources settle (a load
// balancer being provisioned, a machine booting, a change being applied):
// each pending resource settles on its N-th read, or at once on Advance,
// never on a timer, so tests need no sleep.
//
// A Lifecycle is not safe for concurrent use: the simulator's state lock
// guards it, as it guards the resources whose settle functions it runs.
type Lifecycle struct {
	reads   int
	pending []*pendingResource // in Start order
}

type pendingResource struct {
	id     string
	reads  int
	settle func()
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

// Reads is how many reads settle a resource; negative: none, it settles
// at once.
func (l *Lifecycle) Reads() int { return l.reads }

// Start makes resource id pending, with no reads counted (again, if it
// was pending already); settle runs, once, when it settles. With a
// negative Reads it settles now.
func (l *Lifecycle) Start(id string, settle func()) {
	l.Stop(id)
	if l.reads < 0 {
		settle()
		return
	}
	l.pending = append(l.pending, &pendingResource{id: id, settle: settle})
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
	l.pending = slices.Delete(l.pending, i, i+1)
	p.settle()
	return true
}

// Pending reports whether resource id has yet to settle.
func (l *Lifecycle) Pending(id string) bool { return l.index(id) >= 0 }

// Stop forgets resource id without settling it: it was deleted, or set to
// a final state by hand.
func (l *Lifecycle) Stop(id string) {
	if i := l.index(id); i >= 0 {
		l.pending = slices.Delete(l.pending, i, i+1)
	}
}

// Advance settles every pending resource now, in the order they started.
// One a settle function stops is not settled; one it starts (again) stays
// pending.
func (l *Lifecycle) Advance() {
	for _, p := range slices.Clone(l.pending) {
		i := slices.Index(l.pending, p)
		if i < 0 {
			continue
		}
		l.pending = slices.Delete(l.pending, i, i+1)
		p.settle()
	}
}

func (l *Lifecycle) index(id string) int {
	return slices.IndexFunc(l.pending, func(p *pendingResource) bool { return p.id == id })
}
