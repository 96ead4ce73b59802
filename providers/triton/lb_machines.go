package triton

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/joyent/triton-go/compute"
)

// This file is the shared lists the load balancers read. The list of the
// cluster's machines holds every machine tagged k8s-cluster=<cluster>, that
// is the nodes the load balancers have tagged and the Moirai appliances:
// the load balancers' lookups (the pipeline's shared list,
// framework.LoadBalancerLister), their node-tag edits and the drain
// controller all read it, so that a burst of syncs (a thousand Nodes
// joining, two hundred Services created, a CCM restarted) costs a handful
// of lists instead of a GET per node and per Service. The list of the
// appliances' firewall rules (lb_firewall.go) is the same for the rules.
//
// A list serves for a TTL. What this process writes, or reads directly, is
// recorded in it at once, and survives a list that was already running when
// the write happened (the records newer than a list are applied over it),
// so the TTL only bounds how late a change made outside this CCM (a user
// editing a node's tags, say) is seen.

// sharedList is the objects of one list call, made once for all concurrent
// callers and served for a TTL, with this process's own writes recorded
// over it.
type sharedList[T any] struct {
	// list lists the objects, every page.
	list func(context.Context) ([]*T, error)
	// key is an object's ID; keep says whether an object recorded belongs
	// in the list (what the list call filters on).
	key  func(*T) string
	keep func(*T) bool
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	// gen orders list starts and records.
	gen uint64
	// listed is the newest list finished, with the newer records applied;
	// nil before the first. It is never modified: a record replaces it.
	listed *listed[T]
	// flight is the newest list running, nil when none is.
	flight *flight
	// records are the objects as this process wrote or read them since the
	// list in listed started (nil: gone).
	records map[string]listRecord[T]
}

// listed is one list by ID, started at gen and at.
type listed[T any] struct {
	gen  uint64
	at   time.Time
	byID map[string]*T
}

type flight struct {
	gen  uint64
	at   time.Time
	done chan struct{}
	err  error
}

type listRecord[T any] struct {
	gen uint64
	v   *T
}

func newSharedList[T any](list func(context.Context) ([]*T, error), key func(*T) string, keep func(*T) bool, ttl time.Duration) *sharedList[T] {
	return &sharedList[T]{list: list, key: key, keep: keep, ttl: ttl, now: time.Now, records: map[string]listRecord[T]{}}
}

// clusterMachines is the shared list of the cluster's machines.
type clusterMachines = sharedList[compute.Instance]

func newClusterMachines(cluster string, list func(context.Context) ([]*compute.Instance, error), ttl time.Duration) *clusterMachines {
	return newSharedList(list, func(m *compute.Instance) string { return m.ID },
		func(m *compute.Instance) bool { return m.Tags[clusterTag] == cluster }, ttl)
}

// snapshot returns a list that started within the TTL, listing when there
// is none (fresh: a list that started after this call). Callers must not
// modify it.
func (c *sharedList[T]) snapshot(ctx context.Context, fresh bool) (*listed[T], error) {
	c.mu.Lock()
	since, cutoff := c.gen, c.now().Add(-c.ttl)
	usable := func(gen uint64, at time.Time) bool {
		if fresh || c.ttl <= 0 {
			return gen > since
		}
		return !at.Before(cutoff)
	}
	for {
		if l := c.listed; l != nil && usable(l.gen, l.at) {
			c.mu.Unlock()
			return l, nil
		}
		f := c.flight
		if f == nil || !usable(f.gen, f.at) {
			f = c.start(ctx)
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-f.done:
		}
		if f.err != nil {
			return nil, f.err
		}
		c.mu.Lock()
	}
}

// start starts a list (c.mu held); it runs on when the caller that started
// it stops waiting, for the others.
func (c *sharedList[T]) start(ctx context.Context) *flight {
	c.gen++
	f := &flight{gen: c.gen, at: c.now(), done: make(chan struct{})}
	c.flight = f
	go func() {
		vs, err := c.list(context.WithoutCancel(ctx))
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.flight == f {
			c.flight = nil
		}
		f.err = err
		close(f.done)
		if err != nil || c.listed != nil && c.listed.gen > f.gen {
			return
		}
		l := &listed[T]{gen: f.gen, at: f.at, byID: make(map[string]*T, len(vs))}
		for _, v := range vs {
			l.byID[c.key(v)] = v
		}
		// What was recorded while the list ran wins over it; what was
		// recorded before, the list shows.
		for id, r := range c.records {
			if r.gen <= f.gen {
				delete(c.records, id)
				continue
			}
			c.apply(l.byID, id, r.v)
		}
		c.listed = l
	}()
	return f
}

// all returns the listed objects, sorted by ID.
func (c *sharedList[T]) all(ctx context.Context, fresh bool) ([]*T, error) {
	l, err := c.snapshot(ctx, fresh)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(l.byID))
	out := make([]*T, len(ids))
	for i, id := range ids {
		out[i] = l.byID[id]
	}
	return out, nil
}

// get returns the object id as the list (or a later record) has it; nil
// when the list lacks it.
func (c *sharedList[T]) get(ctx context.Context, id string) (*T, error) {
	l, err := c.snapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	return l.byID[id], nil
}

// store records an object as a write or a read just left it. Callers must
// not modify v afterwards.
func (c *sharedList[T]) store(v *T) { c.record(c.key(v), v) }

// expire makes the next caller list afresh, for a read that found the
// list wrong.
func (c *sharedList[T]) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listed = nil
}

// forget records that object id is gone.
func (c *sharedList[T]) forget(id string) { c.record(id, nil) }

func (c *sharedList[T]) record(id string, v *T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.records[id] = listRecord[T]{gen: c.gen, v: v}
	if l := c.listed; l != nil {
		byID := maps.Clone(l.byID)
		c.apply(byID, id, v)
		c.listed = &listed[T]{gen: l.gen, at: l.at, byID: byID}
	}
}

// apply puts v in byID, or takes id out when v is nil (gone) or does not
// belong in the list.
func (c *sharedList[T]) apply(byID map[string]*T, id string, v *T) {
	if v == nil || !c.keep(v) {
		delete(byID, id)
		return
	}
	byID[id] = v
}
