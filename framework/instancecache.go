package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
// falls through to the provider's direct, authoritative lookup. A name
// that several listed instances share is an error, never one of them: a
// Node given an unrelated VM's providerID would be deleted with that VM.
type instanceCache struct {
	src Instances
	ttl time.Duration
	now func() time.Time

	flight singleflight.Group

	mu      sync.Mutex
	fetched time.Time
	// started is when the list in byIDs started.
	started time.Time
	byIDs   map[string]*Instance
	byNames map[string]*Instance
	// sameName holds the IDs of the instances that share a name, sorted.
	sameName map[string][]string
	// refreshes counts finished refreshes; listErr is the last one's error.
	refreshes uint64
	listErr   error
	listable  bool
}

func newInstanceCache(src Instances, ttl time.Duration) *instanceCache {
	if ttl == 0 {
		ttl = DefaultInstanceCacheTTL
	}
	return &instanceCache{src: src, ttl: ttl, now: time.Now, listable: ttl > 0}
}

// byID looks instance id up in a list no older than maxAge (0: the TTL;
// never older than the TTL) that started after after, else directly.
func (c *instanceCache) byID(ctx context.Context, id string, maxAge time.Duration, after time.Time) (*Instance, error) {
	inst, err := c.cached(ctx, maxAge, after, func() (*Instance, error) { return c.byIDs[id], nil })
	if inst != nil || err != nil {
		return inst, err
	}
	return c.src.InstanceByID(ctx, id)
}

// byName looks the instance a Node named name is backed by up in a list
// no older than maxAge (0: the TTL; never older than the TTL) that
// started after after, else directly.
func (c *instanceCache) byName(ctx context.Context, name string, maxAge time.Duration, after time.Time) (*Instance, error) {
	inst, err := c.cached(ctx, maxAge, after, func() (*Instance, error) {
		if ids := c.sameName[name]; len(ids) > 1 {
			return nil, fmt.Errorf("instances %s are all named %q: give the Node its providerID, or rename all but one", strings.Join(ids, ", "), name)
		}
		return c.byNames[name], nil
	})
	if inst != nil || err != nil {
		return inst, err
	}
	return c.src.InstanceByName(ctx, name)
}

// cached answers a lookup from a list younger than maxAge (the TTL when
// 0 or longer) that started after after (zero: any), refreshing the list
// (once for all concurrent callers) when it is not. pick runs with c.mu
// held. A nil instance and error means "ask the provider directly": also
// when the list a caller waited for still started too early (one already
// running when it came), and the next one too.
func (c *instanceCache) cached(ctx context.Context, maxAge time.Duration, after time.Time, pick func() (*Instance, error)) (*Instance, error) {
	fresh := c.ttl
	if maxAge > 0 && maxAge < fresh {
		fresh = maxAge
	}
	for tries := 0; ; tries++ {
		c.mu.Lock()
		if !c.listable {
			c.mu.Unlock()
			return nil, nil
		}
		// A list the caller waited for is as young as any: only when it
		// started counts.
		if (tries > 0 || c.now().Sub(c.fetched) < fresh) && !c.started.Before(after) {
			defer c.mu.Unlock()
			return pick()
		}
		seen := c.refreshes
		c.mu.Unlock()
		if tries == 2 {
			return nil, nil
		}

		// DoChan so a caller whose ctx ends stops waiting; the list itself
		// runs detached from any one caller's cancellation. A refresh that
		// finished since the caller looked serves it: callers that found
		// the list stale while one ran do not list again.
		ch := c.flight.DoChan("list", func() (any, error) {
			c.mu.Lock()
			done, err := c.refreshes != seen, c.listErr
			c.mu.Unlock()
			if done {
				return nil, err
			}
			return nil, c.refresh(context.WithoutCancel(ctx))
		})
		select {
		case <-ctx.Done():
			return nil, nil
		case res := <-ch:
			if res.Err != nil {
				return nil, nil
			}
		}
	}
}

func (c *instanceCache) refresh(ctx context.Context) error {
	c.mu.Lock()
	started := c.now()
	c.mu.Unlock()
	list, err := c.src.ListInstances(ctx)
	if err == nil {
		err = checkListed(list)
	}
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
		c.byIDs, c.byNames, c.sameName, c.fetched, c.started = nil, nil, nil, c.now(), started
		c.refreshes, c.listErr = c.refreshes+1, err
		c.mu.Unlock()
		return err
	}
	ids := make(map[string]*Instance, len(list))
	names := make(map[string]*Instance, len(list))
	var sameName map[string][]string
	for _, inst := range list {
		if inst == nil {
			continue
		}
		ids[inst.ID] = inst
		for _, name := range append([]string{inst.Name}, inst.Aliases...) {
			if name == "" {
				continue
			}
			if other, taken := names[name]; taken && other.ID != inst.ID {
				if sameName == nil {
					sameName = map[string][]string{}
				}
				if len(sameName[name]) == 0 {
					sameName[name] = []string{other.ID}
				}
				sameName[name] = append(sameName[name], inst.ID)
				continue
			}
			names[name] = inst
		}
	}
	for name, shared := range sameName {
		slices.Sort(shared)
		delete(names, name)
	}
	c.mu.Lock()
	c.byIDs, c.byNames, c.sameName, c.fetched, c.started = ids, names, sameName, c.now(), started
	c.refreshes, c.listErr = c.refreshes+1, nil
	c.mu.Unlock()
	return nil
}

// checkListed fails a list holding an instance without an ID (a cloud
// answer missing it): the list is not used, and lookups go direct.
func checkListed(list []*Instance) error {
	for _, inst := range list {
		if inst != nil && inst.ID == "" {
			return fmt.Errorf("listing instances: malformed cloud answer: instance %q has no ID", inst.Name)
		}
	}
	return nil
}
