package rancher

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// agentFixture is agent IPs read from a simulated Cattle holding one
// host, on a clock the test moves (now).
type agentFixture struct {
	sim    *ranchersim.Server
	api    *cloud.API
	ctx    context.Context
	host   ranchersim.Host
	agents *agentIPs
	now    time.Time
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	sim, a := startAPI(t)
	_, ctx := ktesting.NewTestContext(t)
	f := &agentFixture{sim: sim, api: a, ctx: ctx, host: sim.AddHost(ranchersim.Host{Hostname: "node-1"}), now: time.Unix(1_000_000, 0)}
	f.agents = newAgentIPs(a, 30*time.Second)
	f.agents.now = func() time.Time { return f.now }
	return f
}

// lists is how many host lists the simulator has answered.
func (f *agentFixture) lists() int { return f.sim.Stats()[ranchersim.Operations["hosts.list"]] }

// The agent IPs of Nodes without an InternalIP cost one host list for a
// whole sync of many load balancers, however many ask at once; a host the
// kept list lacks is listed for once, a gone one once per missRefresh;
// a stale list (past the TTL) is listed again.
func TestAgentIPsShareOneHostList(t *testing.T) {
	f := newAgentFixture(t)
	sim, ctx, h1, c, lists := f.sim, f.ctx, f.host, f.agents, f.lists
	before := lists()

	var wg sync.WaitGroup
	for range 200 { // one load balancer each
		wg.Go(func() {
			got, err := c.lookup(ctx, []string{h1.UUID})
			if err != nil || got[h1.UUID] != h1.AgentIPAddress {
				t.Errorf("lookup = %v, %v; want %s", got, err, h1.AgentIPAddress)
			}
		})
	}
	wg.Wait()
	if n := lists() - before; n != 1 {
		t.Fatalf("200 lookups listed the hosts %d times, want 1", n)
	}

	h2 := sim.AddHost(ranchersim.Host{Hostname: "node-2"})
	if got, _ := c.lookup(ctx, []string{h2.UUID}); got[h2.UUID] != h2.AgentIPAddress || lists()-before != 2 {
		t.Fatalf("a host newer than the list: %v after %d lists, want %s and a second list", got, lists()-before, h2.AgentIPAddress)
	}
	for range 50 { // a gone host's Node, in 50 load balancers' syncs
		if got, _ := c.lookup(ctx, []string{"gone"}); len(got) != 0 {
			t.Fatalf("a gone host has IPs: %v", got)
		}
	}
	if n := lists() - before; n != 3 {
		t.Fatalf("a gone host listed the hosts %d times in all, want once more (3)", n)
	}
	f.now = f.now.Add(missRefresh)
	if _, _ = c.lookup(ctx, []string{"gone"}); lists()-before != 4 {
		t.Fatalf("a gone host was not looked for again after missRefresh: %d lists", lists()-before)
	}
	if _, _ = c.lookup(ctx, []string{h1.UUID, h2.UUID}); lists()-before != 4 {
		t.Fatalf("known hosts listed again: %d lists", lists()-before)
	}
	f.now = f.now.Add(31 * time.Second)
	if _, _ = c.lookup(ctx, []string{h1.UUID}); lists()-before != 5 {
		t.Fatalf("a stale list was not refreshed: %d lists", lists()-before)
	}
}

// A node joining is looked up in the instance list (instances.go) moments
// before its load balancers need its agent IP: that list serves them, so
// the join costs one host list, not two. A list that started before the
// kept one does not replace it.
func TestAgentIPsFromTheInstanceList(t *testing.T) {
	f := newAgentFixture(t)
	ctx, h1, c, lists := f.ctx, f.host, f.agents, f.lists
	inst := &instances{api: f.api, agents: c}

	older := c.listing() // a list that starts now and ends after the next
	f.now = f.now.Add(time.Second)
	if _, err := inst.list(ctx); err != nil {
		t.Fatal(err)
	}
	before := lists()
	got, err := c.lookup(ctx, []string{h1.UUID})
	if err != nil || got[h1.UUID] != h1.AgentIPAddress {
		t.Fatalf("lookup = %v, %v; want %s", got, err, h1.AgentIPAddress)
	}
	if n := lists() - before; n != 0 {
		t.Fatalf("the agent IP of a host the instance list just read cost %d more host lists, want 0", n)
	}

	older(nil) // it held no host: it must not replace the newer list
	if got, _ := c.lookup(ctx, []string{h1.UUID}); got[h1.UUID] != h1.AgentIPAddress || lists() != before {
		t.Fatalf("an older list replaced the kept one: lookup = %v after %d lists", got, lists()-before)
	}
	f.now = f.now.Add(31 * time.Second)
	if _, _ = c.lookup(ctx, []string{h1.UUID}); lists()-before != 1 {
		t.Fatalf("a stale instance list was not listed again: %d lists", lists()-before)
	}
}
