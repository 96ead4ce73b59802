package framework

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"
)

// DefaultLoadBalancerCacheTTL is how long one list of the cloud's load
// balancers serves the pipeline's lookups when the driver implements
// LoadBalancerLister. The pipeline's own writes go into the list at once, so
// the TTL only bounds how late a change made outside this CCM (in the
// cloud console, say) is seen.
const DefaultLoadBalancerCacheTTL = 30 * time.Second

// lbCache serves the pipeline's Get and Find from one shared list of the
// cloud's load balancers, refreshed once for all concurrent callers when it
// is older than the TTL. What the pipeline writes (create, update, delete)
// is written through, and survives a refresh that was already running when
// the write happened.
//
// Answers:
//   - a hit is a copy of the listed (or last written) LB. A hit that is
//     provisioning is answered from a list that started after the caller's
//     last look at it, refreshing the list if needed: every LB waiting to
//     become active shares that one list instead of a GET each;
//   - a Get miss goes to the driver (the LB may be newer than the list);
//   - a Find miss is not-found, trusted only from a list that started after
//     the last failed Create (whose LB may exist even though the answer was
//     lost);
//   - a failing list, or an LB whose last write failed, goes to the driver.
type lbCache[C, LB any] struct {
	driver LoadBalancerDriver[C, LB]
	lister LoadBalancerLister[C, LB]
	ttl    time.Duration
	now    func() time.Time

	flight singleflight.Group

	mu sync.Mutex
	// gen orders list starts, writes and direct reads.
	gen uint64
	// fetched is when the last finished refresh started, failed or not;
	// fetchGen is gen then.
	fetched  time.Time
	fetchGen uint64
	// listed: entries hold a list (the last refresh succeeded).
	listed bool
	// listGen is gen when the list in entries started.
	listGen uint64
	entries map[string]*lbEntry[LB]
	// records are what this process learned about single LBs (writes and
	// direct reads), merged over a list that started before them.
	records map[string]lbRecord[LB]
	// distrust: a Find miss is believed only from a list with listGen
	// above it.
	distrust uint64
	// disabled: the driver's List is not implemented.
	disabled bool
}

type lbEntry[LB any] struct {
	lb *LB // never modified: callers get copies
	// seen is the gen of the newest data a caller has been given about this
	// LB; a changing LB is answered only from a list that started later.
	seen uint64
	// dirty: a write to the LB failed halfway, so the cloud may differ from
	// lb; read it directly.
	dirty bool
}

type lbRecordKind int

const (
	lbStored lbRecordKind = iota
	lbRemoved
	lbDirty
)

type lbRecord[LB any] struct {
	gen  uint64
	kind lbRecordKind
	lb   *LB // for lbStored
}

func newLBCache[C, LB any](driver LoadBalancerDriver[C, LB], lister LoadBalancerLister[C, LB], ttl time.Duration) *lbCache[C, LB] {
	if ttl == 0 {
		ttl = DefaultLoadBalancerCacheTTL
	}
	return &lbCache[C, LB]{driver: driver, lister: lister, ttl: ttl, now: time.Now, records: map[string]lbRecord[LB]{}}
}

// get returns the LB with this ID.
func (c *lbCache[C, LB]) get(ctx context.Context, id string) (*LB, error) {
	lb, res := c.cached(ctx, false, func() *lbEntry[LB] { return c.entries[id] })
	if res == lbHit {
		return lb, nil
	}
	// Not in the list (it may be newer), or the list is unusable.
	lb, err := c.driver.Get(ctx, id)
	c.observe(id, lb, err)
	return lb, err
}

// find returns the LB the lister says req owns; the lowest ID when several
// do, as there should be only one.
func (c *lbCache[C, LB]) find(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error) {
	lb, res := c.cached(ctx, true, func() *lbEntry[LB] {
		var bestID string
		var best *lbEntry[LB]
		for id, e := range c.entries {
			if (best == nil || id < bestID) && c.lister.Owns(e.lb, req) {
				bestID, best = id, e
			}
		}
		return best
	})
	switch res {
	case lbHit:
		return lb, nil
	case lbMiss:
		return nil, NotFound("no load balancer owned by Service %s/%s among the cloud's", req.Service.Namespace, req.Service.Name)
	}
	lb, err := c.driver.Find(ctx, req)
	if err == nil {
		c.observe(c.driver.Inspect(lb).ID, lb, nil)
	}
	return lb, err
}

type lbResult int

const (
	lbHit    lbResult = iota
	lbMiss            // not in a list trusted for misses
	lbDirect          // ask the driver
)

// cached answers a lookup from the list. pick runs with c.mu held and
// returns the matching entry, nil for none. trustMiss: a miss is taken as
// not-found, so it needs a list newer than the last failed Create.
func (c *lbCache[C, LB]) cached(ctx context.Context, trustMiss bool, pick func() *lbEntry[LB]) (*LB, lbResult) {
	c.mu.Lock()
	stale, since := !c.disabled && c.now().Sub(c.fetched) >= c.ttl, c.fetchGen
	c.mu.Unlock()
	if stale {
		c.refresh(ctx, since)
	}
	for refreshed := stale; ; refreshed = true {
		c.mu.Lock()
		since = c.fetchGen
		if !c.listed || c.disabled {
			c.mu.Unlock()
			return nil, lbDirect
		}
		e := pick()
		var again bool
		switch {
		case e == nil && trustMiss && c.listGen <= c.distrust:
			// A Create failed after this list started: its LB may exist.
			again = true
		case e == nil:
			c.mu.Unlock()
			return nil, lbMiss
		case e.dirty:
			c.mu.Unlock()
			return nil, lbDirect
		case changing(c.driver.Inspect(e.lb)):
			if c.listGen > e.seen {
				e.seen = c.listGen
				break
			}
			// The caller has seen this already; it waits for news.
			again = !refreshed
		}
		if again {
			c.mu.Unlock()
			if refreshed {
				return nil, lbDirect
			}
			c.refresh(ctx, since)
			continue
		}
		v := *e.lb
		c.mu.Unlock()
		return &v, lbHit
	}
}

// refresh lists the LBs once for all concurrent callers, unless a refresh
// finished since the caller looked (at fetchGen since). A caller whose ctx
// ends stops waiting; the list itself runs on, detached from any one
// caller's cancellation.
func (c *lbCache[C, LB]) refresh(ctx context.Context, since uint64) {
	ch := c.flight.DoChan("list", func() (any, error) {
		c.mu.Lock()
		done := c.fetchGen > since
		c.mu.Unlock()
		if done {
			return nil, nil
		}
		return nil, c.load(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
	case <-ch:
	}
}

func (c *lbCache[C, LB]) load(ctx context.Context) error {
	c.mu.Lock()
	c.gen++
	start, at := c.gen, c.now()
	c.mu.Unlock()

	list, err := c.lister.List(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetched, c.fetchGen = at, start
	if err != nil {
		// Serve every lookup directly until the next refresh, rather than
		// paying a failing list call on each one.
		klog.FromContext(ctx).V(2).Info("Listing load balancers failed; using direct lookups until the next refresh", "err", err)
		c.listed, c.entries = false, nil
		c.disabled = errors.Is(err, ErrNotImplemented)
		return err
	}
	entries := make(map[string]*lbEntry[LB], len(list))
	for _, lb := range list {
		if lb == nil {
			continue
		}
		if id := c.driver.Inspect(lb).ID; id != "" {
			entries[id] = &lbEntry[LB]{lb: lb}
		}
	}
	// What was written while the list ran wins over the list; what was
	// written before, the list already shows.
	for id, r := range c.records {
		if r.gen <= start {
			delete(c.records, id)
			continue
		}
		applyRecord(entries, id, r)
	}
	c.entries, c.listed, c.listGen = entries, true, start
	return nil
}

func applyRecord[LB any](entries map[string]*lbEntry[LB], id string, r lbRecord[LB]) {
	switch r.kind {
	case lbStored:
		entries[id] = &lbEntry[LB]{lb: r.lb, seen: r.gen}
	case lbRemoved:
		delete(entries, id)
	case lbDirty:
		if e := entries[id]; e != nil {
			entries[id] = &lbEntry[LB]{lb: e.lb, seen: e.seen, dirty: true}
		}
	}
}

func (c *lbCache[C, LB]) record(id string, kind lbRecordKind, lb *LB) {
	if id == "" {
		return
	}
	if lb != nil {
		v := *lb
		lb = &v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	r := lbRecord[LB]{gen: c.gen, kind: kind, lb: lb}
	c.records[id] = r
	if c.listed {
		applyRecord(c.entries, id, r)
	}
}

// stored writes through an LB as the driver's Create or Update left it.
func (c *lbCache[C, LB]) stored(lb *LB) { c.record(c.driver.Inspect(lb).ID, lbStored, lb) }

// removed writes through a delete (or an LB found gone).
func (c *lbCache[C, LB]) removed(id string) { c.record(id, lbRemoved, nil) }

// writeFailed marks the LB for direct reads: a failed write may have
// changed part of it.
func (c *lbCache[C, LB]) writeFailed(id string) { c.record(id, lbDirty, nil) }

// createFailed distrusts Find misses until a list that starts now: the
// Create may have made the LB even though its answer was lost.
func (c *lbCache[C, LB]) createFailed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.distrust = c.gen
}

// observe records the result of a direct read.
func (c *lbCache[C, LB]) observe(id string, lb *LB, err error) {
	switch {
	case err == nil && lb != nil:
		c.record(id, lbStored, lb)
	case IsNotFound(err):
		c.mu.Lock()
		_, known := c.entries[id]
		c.mu.Unlock()
		if known {
			c.removed(id)
		}
	}
}

// changing reports whether an LB may change state on its own: the cloud is
// working on it, or it failed (and may recover, e.g. once the user fixed a
// domain). The cache answers such an LB only from a list newer than what
// the caller saw, so each retry sees news.
func changing(s LoadBalancerState) bool { return s.busy() || s.Failed != "" }
