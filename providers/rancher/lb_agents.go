package rancher

import (
	"context"
	"fmt"
	"sync"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	"golang.org/x/sync/singleflight"

	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// agentIPs is the hosts' agent IPs by host uuid, for the load balancers'
// Nodes that have a providerID but no InternalIP yet: the node controller
// writes a Node's providerID before its addresses, and the service
// controller syncs every load balancer on the providerID change, not on
// the addresses. The instance list the Node was just looked up in serves
// them (note), and otherwise one host list every load balancer of that
// sync: the answer is kept for the instance-cache TTL (none when
// negative), concurrent readers share one list, and a uuid the kept
// answer lacks (a host newer than it) lists again - once: a uuid a list
// just made still lacks (a removed host's Node) is not listed for again
// for missRefresh.
type agentIPs struct {
	api *cloud.API
	ttl time.Duration
	now func() time.Time

	lists singleflight.Group
	mu    sync.Mutex
	at    time.Time
	byID  map[string]string
	// missed are the uuids a list was made for and lacked, and when.
	missed map[string]time.Time
}

// missRefresh is how long a uuid a fresh list lacked is taken as absent:
// a Node whose host is gone costs one list per missRefresh, not one per
// load balancer.
const missRefresh = 5 * time.Second

func newAgentIPs(a *cloud.API, ttl time.Duration) *agentIPs {
	return &agentIPs{api: a, ttl: ttl, now: time.Now}
}

// lookup returns the agent IPs of the live hosts with these uuids (those
// it knows; a missing one is simply absent).
func (c *agentIPs) lookup(ctx context.Context, uuids []string) (map[string]string, error) {
	if m, ok := c.kept(uuids); ok {
		return m, nil
	}
	v, err, _ := c.lists.Do("hosts", func() (any, error) { return c.refresh(ctx) })
	if err != nil {
		return nil, err
	}
	byID := v.(map[string]string)
	m := make(map[string]string, len(uuids))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range uuids {
		if ip, ok := byID[u]; ok {
			m[u] = ip
		} else {
			c.missed[u] = c.now()
		}
	}
	return m, nil
}

// kept answers from the kept list when it is fresh and knows every uuid
// but those a list lacked less than missRefresh ago.
func (c *agentIPs) kept(uuids []string) (map[string]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		return nil, false
	}
	age := c.now().Sub(c.at)
	if c.ttl < 0 || age > c.ttl { // a negative TTL keeps nothing
		return nil, false
	}
	out := make(map[string]string, len(uuids))
	complete := true
	for _, u := range uuids {
		if ip, ok := c.byID[u]; ok {
			out[u] = ip
		} else if at, ok := c.missed[u]; !ok || c.now().Sub(at) >= missRefresh {
			complete = false
		}
	}
	return out, complete
}

// refresh lists the live hosts, all pages, and keeps their agent IPs.
func (c *agentIPs) refresh(ctx context.Context) (map[string]string, error) {
	started := c.now()
	hosts, err := cloud.ListAll[rancher.Host](ctx, c.api, "hosts.list", rancher.HOST_TYPE, map[string]any{"removed_null": "1"}, listPageSize)
	if err != nil {
		return nil, fmt.Errorf("reading the agent IPs of Nodes without an InternalIP: %w", err)
	}
	byID := make(map[string]string, len(hosts))
	for i := range hosts {
		if err := addAgentIP(byID, &hosts[i]); err != nil {
			return nil, fmt.Errorf("reading the agent IPs of Nodes without an InternalIP: %w", err)
		}
	}
	c.keep(byID, started)
	return byID, nil
}

// listing is called as a complete host list made elsewhere starts; what
// it returns is called with the list's hosts (note).
func (c *agentIPs) listing() func([]listedHost) {
	started := c.now()
	return func(hosts []listedHost) { c.note(hosts, started) }
}

// note keeps the agent IPs of a complete list of the live hosts that
// started at started, made for the instance cache (instances.go): a node
// joining is looked up in that list moments before its load balancers
// need its agent IP, which the list then serves without a second one. A
// host the list holds malformed is left out (a lookup of it lists again,
// and fails there); a list older than the kept one changes nothing.
func (c *agentIPs) note(hosts []listedHost, started time.Time) {
	byID := make(map[string]string, len(hosts))
	for i := range hosts {
		_ = addAgentIP(byID, &hosts[i].Host)
	}
	c.keep(byID, started)
}

// addAgentIP adds h's agent IP to byID when h is live and has one.
func addAgentIP(byID map[string]string, h *rancher.Host) error {
	gone, err := cloud.Removed("host", h.Id, h.State, h.Removed)
	if err != nil {
		return err
	}
	if !gone && h.Uuid != "" && h.AgentIpAddress != "" {
		byID[h.Uuid] = h.AgentIpAddress
	}
	return nil
}

// keep makes byID, from a list that started at started, the kept answer,
// unless the kept one is newer.
func (c *agentIPs) keep(byID map[string]string, started time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID != nil && started.Before(c.at) {
		return
	}
	c.byID, c.at = byID, started
	if c.missed == nil {
		c.missed = map[string]time.Time{}
	}
	for u, at := range c.missed { // forget old misses: the map stays small
		if c.at.Sub(at) >= missRefresh {
			delete(c.missed, u)
		}
	}
}
