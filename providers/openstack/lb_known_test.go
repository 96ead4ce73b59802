package openstack

import (
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
)

// listed is a load balancer as a list shows it: ACTIVE with one listener
// and pool, updated at updated.
func listed(updated string) *octaviaLB {
	lb := &octaviaLB{shape: shapeOf([]idRef{{"l1"}}, []idRef{{"p1"}}), updated: updated}
	lb.LB.ID, lb.LB.ProvisioningStatus = "lb1", statusActive
	return lb
}

func loadedTree(lb *octaviaLB) *octaviaLB {
	lb.Listeners = []listeners.Listener{{ID: "l1", DefaultPoolID: "p1"}}
	lb.Pools = []pools.Pool{{ID: "p1"}}
	lb.Members = map[string]poolMembers{"p1": desiredPoolMembers([]memberSpec{{Address: "10.0.0.1", Port: 30080}})}
	lb.Monitors, lb.loaded = map[string]monitors.Monitor{}, true
	return lb
}

// TestKnowledgeTree: children read once serve the load balancer while it
// is listed ACTIVE with the same children and updated_at; a write of the
// driver's own is trusted once Octavia shows another updated_at.
func TestKnowledgeTree(t *testing.T) {
	now := time.Unix(1000, 0)
	k := newLBKnowledge(true)
	k.now = func() time.Time { return now }
	since := k.mark()
	k.storeTree(loadedTree(listed("t1")), since)

	if !k.attachTree(listed("t1")) {
		t.Fatal("unchanged load balancer: children not known")
	}
	if k.attachTree(listed("t2")) {
		t.Error("updated_at moved on: children still trusted")
	}
	other := listed("t1")
	other.shape = shapeOf([]idRef{{"l1"}, {"l2"}}, []idRef{{"p1"}})
	if k.attachTree(other) {
		t.Error("another listener: children still trusted")
	}
	pending := listed("t1")
	pending.LB.ProvisioningStatus = statusPendingUpdate
	if k.attachTree(pending) {
		t.Error("PENDING_UPDATE: children trusted")
	}

	// The driver's member update: the list from before it waits, the first
	// ACTIVE load balancer after it has the new members.
	lb := listed("t1")
	k.attachTree(lb)
	lb.Members = map[string]poolMembers{"p1": desiredPoolMembers(nil)}
	k.wrote(lb, true)
	if ok, wait := k.attachTreeOrWait(listed("t1")); ok || !wait {
		t.Errorf("listed before the write: attached %v, wait %v; want to wait", ok, wait)
	}
	after := listed("t3")
	if !k.attachTree(after) || after.Members["p1"].sum != desiredPoolMembers(nil).sum {
		t.Fatalf("after the write: %+v", after.Members)
	}
	if !k.attachTree(listed("t3")) || k.attachTree(listed("t1")) {
		t.Error("t3 did not become the children's updated_at")
	}

	// Any other write: read them again.
	lb = listed("t3")
	k.attachTree(lb)
	k.wrote(lb, false)
	if k.attachTree(listed("t4")) {
		t.Error("children known after a listener write")
	}

	// A read older than treeMaxAge is read again.
	k.storeTree(loadedTree(listed("t4")), k.mark())
	now = now.Add(treeMaxAge + time.Second)
	if k.attachTree(listed("t4")) {
		t.Error("children older than treeMaxAge trusted")
	}

	// A read that raced a write of the driver is not kept.
	k.forget("lb1")
	since = k.mark()
	k.setFIP("lb1", nil)
	k.storeTree(loadedTree(listed("t5")), since)
	if k.attachTree(listed("t5")) {
		t.Error("a read older than the driver's write was kept")
	}
}

func TestKnowledgeOff(t *testing.T) {
	k := newLBKnowledge(false)
	k.storeTree(loadedTree(listed("t1")), k.mark())
	k.setFIP("lb1", nil)
	lb := listed("t1")
	lb.LB.VipPortID = "port"
	if k.attachTree(lb) || k.attachFIP(lb) {
		t.Error("knowledge kept while off")
	}
}

// TestCreatedTree: the tree a fully populated create made is known from
// its answer when the answer tells all of it.
func TestCreatedTree(t *testing.T) {
	in := testInput(func(c *LoadBalancerConfig) { c.HealthMonitor.Enabled = new(true) })
	want, err := desiredListeners(testService(), in)
	if err != nil {
		t.Fatal(err)
	}
	// Octavia's answer: the tree as actualOf has it.
	answer := func() *createdLB {
		made, c := actualOf(want), &createdLB{}
		for _, l := range made.Listeners {
			c.Listeners = append(c.Listeners, listenerRecord{Listener: l})
		}
		for _, p := range made.Pools {
			m := made.Monitors[p.ID]
			p.MonitorID = m.ID
			c.Pools = append(c.Pools, createdPool{Pool: p, Monitor: &m})
		}
		return c
	}
	tree := createdTree(answer(), want)
	if tree == nil {
		t.Fatal("no tree from a full answer")
	}
	lb := &octaviaLB{Listeners: tree.listeners, Pools: tree.pools, Members: tree.members, Monitors: tree.monitors, loaded: true}
	if plan := planChanges(lb, want, in.features, false); len(plan) != 0 {
		t.Errorf("plan on the created tree: %s", describePlan(plan))
	}
	noMonitor := answer()
	noMonitor.Pools[0].Monitor = nil
	if createdTree(noMonitor, want) != nil {
		t.Error("tree from an answer without the health monitor")
	}
	if createdTree(answer(), want[:1]) != nil {
		t.Error("tree from an answer with a listener not asked for")
	}
	if tree := createdTree(&createdLB{}, nil); tree == nil || len(tree.listeners) != 0 {
		t.Errorf("load balancer alone: tree %+v, want an empty one", tree)
	}
}
