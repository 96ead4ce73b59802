package openstack

import (
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
)

// This file is what the driver knows of each load balancer between syncs,
// so that the sync of a load balancer nothing else has changed reads
// nothing but the shared list (see lb_list.go):
//
//   - its children (listeners, pools with their members' digest, health
//     monitors) as the driver last read them, or as its own member update
//     left them. They are trusted while Octavia lists the load balancer
//     ACTIVE with the same listeners and pools and the same updated_at,
//     which Octavia moves on at every change to the load balancer or a
//     child (it goes PENDING_UPDATE and back), and for at most treeMaxAge
//     after they were read;
//   - its floating IP as last read or written; all floating IPs are
//     listed again (one Neutron call) when that list is older than the
//     shared list's TTL.
//
// A failed write, a delete or an ERROR recovery forgets the load balancer.
// With the shared list off (Env.LoadBalancerCacheTTL < 0) nothing is kept
// and every sync reads the cloud.

// treeMaxAge bounds how long children read once are trusted: a change
// made outside the CCM that Octavia applied within the second of its
// previous update (updated_at has whole seconds, so it may not move) is
// seen after that at the latest. It is long so that a node joining a
// cluster idle for a while still costs no reads.
const treeMaxAge = time.Hour

// lbTree is a load balancer's children, never modified once made.
type lbTree struct {
	shape     string
	listeners []listeners.Listener
	pools     []pools.Pool
	members   map[string]poolMembers
	monitors  map[string]monitors.Monitor
}

func treeOf(lb *octaviaLB) *lbTree {
	return &lbTree{shape: treeShape(lb), listeners: lb.Listeners, pools: lb.Pools, members: lb.Members, monitors: lb.Monitors}
}

// treeShape is shapeOf the children lb holds.
func treeShape(lb *octaviaLB) string {
	ls, ps := make([]idRef, len(lb.Listeners)), make([]idRef, len(lb.Pools))
	for i, l := range lb.Listeners {
		ls[i].ID = l.ID
	}
	for i, p := range lb.Pools {
		ps[i].ID = p.ID
	}
	return shapeOf(ls, ps)
}

// lbKnown is what the driver knows of one load balancer.
type lbKnown struct {
	tree *lbTree // nil: unknown
	// updated is the load balancer's updated_at the tree goes with. With
	// settling, the tree is what the driver's own write will leave, and
	// updated is from before that write: the first other updated_at seen
	// on the ACTIVE load balancer becomes the tree's.
	updated  string
	settling bool
	treeAt   time.Time
	// fipKnown: fip is the floating IP on the VIP (nil: none).
	fipKnown bool
	fip      *floatingips.FloatingIP
	// gen orders the driver's reads and writes of the load balancer after
	// lists that started earlier: their older view does not replace it.
	// A list leaves it as it is; any of those sets dealt.
	gen   uint64
	dealt bool
}

// lbKnowledge is what the driver knows, by load balancer ID.
type lbKnowledge struct {
	on  bool
	now func() time.Time

	mu   sync.Mutex
	gen  uint64
	byID map[string]*lbKnown
	// fipsListed is when the last list of every floating IP started.
	fipsListed time.Time
}

func newLBKnowledge(on bool) *lbKnowledge {
	return &lbKnowledge{on: on, now: time.Now, byID: map[string]*lbKnown{}}
}

// mark is the generation to pass to a later store of what a read that
// starts now returns.
func (k *lbKnowledge) mark() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gen
}

// entry returns the record of id, made if needed, with a new generation
// when bump; k.mu is held.
func (k *lbKnowledge) entry(id string, bump bool) *lbKnown {
	e := k.byID[id]
	if e == nil {
		e = &lbKnown{}
		k.byID[id] = e
	}
	if bump {
		k.gen++
		e.gen, e.dealt = k.gen, true
	}
	return e
}

// known reports whether the driver has dealt with the load balancer (read
// or written it, not only listed it).
func (k *lbKnowledge) known(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byID[id]
	return e != nil && e.dealt
}

// attachTree gives lb its children if what is known of them is still
// true of it; false if not.
func (k *lbKnowledge) attachTree(lb *octaviaLB) bool {
	ok, _ := k.attachTreeOrWait(lb)
	return ok
}

// attachTreeOrWait is attachTree, also reporting (wait) when lb is the
// load balancer as it was before a write of the driver that Octavia has
// not applied yet: its children are not worth reading then.
func (k *lbKnowledge) attachTreeOrWait(lb *octaviaLB) (ok, wait bool) {
	if !k.on || lb.LB.ProvisioningStatus != statusActive {
		return false, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byID[lb.LB.ID]
	if e == nil || e.tree == nil || e.tree.shape != lb.shape || k.now().Sub(e.treeAt) > treeMaxAge {
		return false, false
	}
	switch {
	case e.settling && lb.updated == e.updated:
		return false, true // seen before the write
	case e.settling:
		e.updated, e.settling = lb.updated, false
	case lb.updated != e.updated:
		return false, false
	}
	t := e.tree
	lb.Listeners, lb.Pools, lb.Members, lb.Monitors, lb.loaded = t.listeners, t.pools, t.members, t.monitors, true
	return true, false
}

// storeTree records lb's children as just read, unless the driver wrote
// to it after since (mark before the read).
func (k *lbKnowledge) storeTree(lb *octaviaLB, since uint64) {
	if !k.on || !lb.loaded || lb.LB.ProvisioningStatus != statusActive {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byID[lb.LB.ID]; e != nil && e.gen > since {
		return
	}
	e := k.entry(lb.LB.ID, true)
	e.tree, e.updated, e.settling, e.treeAt = treeOf(lb), lb.updated, false, k.now()
}

// wrote records the driver's write to lb: with predicted, lb holds the
// children the write leaves; else they are unknown until read again.
func (k *lbKnowledge) wrote(lb *octaviaLB, predicted bool) {
	if !k.on {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entry(lb.LB.ID, true)
	if !predicted || e.tree == nil {
		e.tree = nil
		return
	}
	// The children were read at e.treeAt; the write does not make them
	// any younger.
	e.tree, e.updated, e.settling = treeOf(lb), lb.updated, true
}

// created records a load balancer the driver just created, with the tree
// it asked for (nil: unknown until read) and no floating IP when Octavia
// made its VIP port.
func (k *lbKnowledge) created(lb *octaviaLB, tree *lbTree, newPort bool) {
	if !k.on {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entry(lb.LB.ID, true)
	if tree != nil {
		e.tree, e.updated, e.settling, e.treeAt = tree, lb.updated, true, k.now()
	}
	if newPort {
		e.fip, e.fipKnown = nil, true
	}
}

// attachFIP gives lb its floating IP if it is known; false if not.
func (k *lbKnowledge) attachFIP(lb *octaviaLB) bool {
	if !hasFIPSlot(lb) {
		lb.FIP, lb.fipLoaded = nil, true
		return true
	}
	if !k.on {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byID[lb.LB.ID]
	if e == nil || !e.fipKnown {
		return false
	}
	lb.FIP, lb.fipLoaded = e.fip, true
	return true
}

// fipKnown reports whether the floating IP of id is known.
func (k *lbKnowledge) fipKnown(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byID[id]
	return e != nil && e.fipKnown
}

// setFIP records the floating IP of id as just read or written (nil:
// none).
func (k *lbKnowledge) setFIP(id string, fip *floatingips.FloatingIP) {
	if !k.on {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entry(id, true)
	e.fip, e.fipKnown = fip, true
}

// fipsDue reports whether the floating IPs were last listed ttl ago or
// more.
func (k *lbKnowledge) fipsDue(ttl time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.now().Sub(k.fipsListed) >= ttl
}

// storeFIPs records the floating IPs of lbs from a list of every floating
// IP (by port) that started at at, after mark since.
func (k *lbKnowledge) storeFIPs(lbs []*octaviaLB, byPort map[string]*floatingips.FloatingIP, since uint64, at time.Time) {
	if !k.on {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, lb := range lbs {
		if !hasFIPSlot(lb) {
			continue
		}
		if e := k.byID[lb.LB.ID]; e != nil && e.gen > since {
			continue
		}
		e := k.entry(lb.LB.ID, false)
		e.fip, e.fipKnown = byPort[lb.LB.VipPortID], true
	}
	k.fipsListed = at
}

// forget drops what is known of id.
func (k *lbKnowledge) forget(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.byID, id)
	k.gen++
}

// prune forgets the load balancers a list that started after since did
// not hold, unless the driver dealt with them since.
func (k *lbKnowledge) prune(listed []*octaviaLB, since uint64) {
	ids := make(map[string]bool, len(listed))
	for _, lb := range listed {
		ids[lb.LB.ID] = true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, e := range k.byID {
		if !ids[id] && e.gen <= since {
			delete(k.byID, id)
		}
	}
}

// hasFIPSlot reports whether lb can have a floating IP: an IPv4 VIP port.
func hasFIPSlot(lb *octaviaLB) bool {
	return lb.LB.VipPortID != "" && !isIPv6Addr(lb.LB.VipAddress)
}
