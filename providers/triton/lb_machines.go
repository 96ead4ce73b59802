package triton

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/joyent/triton-go/compute"
)

// This file is the shared list of the cluster's machines: every machine
// tagged k8s-cluster=<cluster>, that is the nodes the load balancers have
// tagged and the Moirai appliances. The load balancers' lookups (the
// pipeline's shared list, framework.LoadBalancerLister), their node-tag
// edits and the drain controller all read it, so that a burst of syncs (a
// thousand Nodes joining, two hundred Services created, a CCM restarted)
// costs a handful of lists instead of a GET per node and per Service.
//
// A list serves for a TTL. What this process writes, or reads directly, is
// recorded in it at once, and survives a list that was already running when
// the write happened (the records newer than a list are applied over it),
// so the TTL only bounds how late a change made outside this CCM (a user
// editing a node's tags, say) is seen.

// clusterMachines is the cluster's machines from one shared list, listed
// once for all concurrent callers.
type clusterMachines struct {
	cluster string
	// list lists the cluster's machines, every page.
	list func(context.Context) ([]*compute.Instance, error)
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	// gen orders list starts and records.
	gen uint64
	// listed is the newest list finished, with the newer records applied;
	// nil before the first. It is never modified: a record replaces it.
	listed *machineList
	// flight is the newest list running, nil when none is.
	flight *machineFlight
	// records are the machines as this process wrote or read them since
	// the list in listed started (nil machine: gone).
	records map[string]machineRecord
}

// machineList is one list of the cluster's machines by ID, started at gen
// and at.
type machineList struct {
	gen  uint64
	at   time.Time
	byID map[string]*compute.Instance
}

type machineFlight struct {
	gen  uint64
	at   time.Time
	done chan struct{}
	err  error
}

type machineRecord struct {
	gen uint64
	m   *compute.Instance
}

func newClusterMachines(cluster string, list func(context.Context) ([]*compute.Instance, error), ttl time.Duration) *clusterMachines {
	return &clusterMachines{cluster: cluster, list: list, ttl: ttl, now: time.Now, records: map[string]machineRecord{}}
}

// snapshot returns a list that started within the TTL, listing when there
// is none (fresh: a list that started after this call). Callers must not
// modify it.
func (c *clusterMachines) snapshot(ctx context.Context, fresh bool) (*machineList, error) {
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
func (c *clusterMachines) start(ctx context.Context) *machineFlight {
	c.gen++
	f := &machineFlight{gen: c.gen, at: c.now(), done: make(chan struct{})}
	c.flight = f
	go func() {
		ms, err := c.list(context.WithoutCancel(ctx))
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
		l := &machineList{gen: f.gen, at: f.at, byID: make(map[string]*compute.Instance, len(ms))}
		for _, m := range ms {
			l.byID[m.ID] = m
		}
		// What was recorded while the list ran wins over it; what was
		// recorded before, the list shows.
		for id, r := range c.records {
			if r.gen <= f.gen {
				delete(c.records, id)
				continue
			}
			c.apply(l.byID, id, r.m)
		}
		c.listed = l
	}()
	return f
}

// machines returns the cluster's machines, sorted by ID.
func (c *clusterMachines) machines(ctx context.Context, fresh bool) ([]*compute.Instance, error) {
	l, err := c.snapshot(ctx, fresh)
	if err != nil {
		return nil, err
	}
	return slices.SortedFunc(maps.Values(l.byID), func(a, b *compute.Instance) int { return strings.Compare(a.ID, b.ID) }), nil
}

// machine returns the machine id as the list (or a later record) has it;
// nil when the list lacks it (not tagged with the cluster, or gone).
func (c *clusterMachines) machine(ctx context.Context, id string) (*compute.Instance, error) {
	l, err := c.snapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	return l.byID[id], nil
}

// store records a machine as a write or a read just left it. Callers must
// not modify m afterwards.
func (c *clusterMachines) store(m *compute.Instance) { c.record(m.ID, m) }

// forget records that machine id is gone.
func (c *clusterMachines) forget(id string) { c.record(id, nil) }

func (c *clusterMachines) record(id string, m *compute.Instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.records[id] = machineRecord{gen: c.gen, m: m}
	if l := c.listed; l != nil {
		byID := maps.Clone(l.byID)
		c.apply(byID, id, m)
		c.listed = &machineList{gen: l.gen, at: l.at, byID: byID}
	}
}

// apply puts m in byID, or takes id out when m is nil (gone) or not tagged
// with the cluster.
func (c *clusterMachines) apply(byID map[string]*compute.Instance, id string, m *compute.Instance) {
	if m == nil || m.Tags[clusterTag] != c.cluster {
		delete(byID, id)
		return
	}
	byID[id] = m
}
