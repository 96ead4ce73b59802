package framework

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"
)

// DefaultInstanceCacheTTL is how long one instance list serves lookups.
// The upstream node controller refreshes every Node's addresses every five
// minutes; with the cache a sweep over N nodes costs ceil(N/page) list calls
// instead of N GETs.
const DefaultInstanceCacheTTL = 30 * time.Second

// instanceCache serves lookups from one shared, periodically refreshed list.
// A hit in a fresh list answers at once. A miss is never taken as not-found:
// the instance may be newer than the list, so a miss (and any list failure)
// falls through to the provider's direct, authoritative lookup.
type instanceCache struct {
	src Instances
	ttl time.Duration
	now func() time.Time

	flight singleflight.Group

	mu       sync.Mutex
	fetched  time.Time
	byIDs    map[string]*Instance
	byNames  map[string]*Instance
	listable bool
}

func newInstanceCache(src Instances, ttl time.Duration) *instanceCache {
	if ttl == 0 {
		ttl = DefaultInstanceCacheTTL
	}
	return &instanceCache{src: src, ttl: ttl, now: time.Now, listable: ttl > 0}
}

func (c *instanceCache) byID(ctx context.Context, id string) (*Instance, error) {
	if inst := c.cached(ctx, func() map[string]*Instance { return c.byIDs }, id); inst != nil {
		return inst, nil
	}
	return c.src.InstanceByID(ctx, id)
}

func (c *instanceCache) byName(ctx context.Context, name string) (*Instance, error) {
	if inst := c.cached(ctx, func() map[string]*Instance { return c.byNames }, name); inst != nil {
		return inst, nil
	}
	return c.src.InstanceByName(ctx, name)
}

// cached returns the instance under key in a fresh list, refreshing the list
// (once for all concurrent callers) when it is stale. nil means "ask the
// provider directly".
func (c *instanceCache) cached(ctx context.Context, index func() map[string]*Instance, key string) *Instance {
	c.mu.Lock()
	if !c.listable {
		c.mu.Unlock()
		return nil
	}
	if c.now().Sub(c.fetched) < c.ttl {
		inst := index()[key]
		c.mu.Unlock()
		return inst
	}
	c.mu.Unlock()

	// DoChan so a caller whose ctx ends stops waiting; the list itself runs
	// detached from any one caller's cancellation.
	ch := c.flight.DoChan("list", func() (any, error) {
		return nil, c.refresh(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
		return nil
	case res := <-ch:
		if res.Err != nil {
			return nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return index()[key]
}

func (c *instanceCache) refresh(ctx context.Context) error {
	list, err := c.src.ListInstances(ctx)
	if err != nil {
		if errors.Is(err, ErrNotImplemented) {
			c.mu.Lock()
			c.listable = false
			c.mu.Unlock()
			return err
		}
		// Serve every lookup directly until the next refresh, rather than
		// paying a failing list call on each one.
		klog.FromContext(ctx).V(2).Info("Listing instances failed; using direct lookups until the next refresh", "err", err)
		c.mu.Lock()
		c.byIDs, c.byNames, c.fetched = nil, nil, c.now()
		c.mu.Unlock()
		return err
	}
	ids := make(map[string]*Instance, len(list))
	names := make(map[string]*Instance, len(list))
	for _, inst := range list {
		if inst == nil {
			continue
		}
		ids[inst.ID] = inst
		if inst.Name != "" {
			names[inst.Name] = inst
		}
	}
	c.mu.Lock()
	c.byIDs, c.byNames, c.fetched = ids, names, c.now()
	c.mu.Unlock()
	return nil
}
