package rancher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// Host states (Cattle's host and agent state machines) the provider acts on.
const (
	hostInactive     = "inactive"
	hostDisconnected = "disconnected"
)

// listPageSize is the page size of the lists that grow with the cluster
// (hosts, load-balancer services, external services), asked for
// explicitly so that a list's cost does not depend on the server's
// setting: a thousand, so that 5,000 hosts are five calls (Cattle's
// default, 100, made them fifty, each a round trip a node's lookup waits
// for; Cattle allows up to 3,000), and 200 load balancers one.
const listPageSize = 1000

// ipReadParallelism bounds the ipAddresses links read at once by a list
// (only for hosts a server answered without their addresses embedded).
const ipReadParallelism = 8

// listedHost is a host as a list with include=ipAddresses answers it:
// IpAddresses is the ipAddresses link's data, nil when the server left it
// out (one that ignores include, as the API spec lets it).
type listedHost struct {
	rancher.Host
	IpAddresses *[]rancher.IpAddress `json:"ipAddresses"` // go-rancher's spelling
}

// instances implements framework.Instances over Cattle hosts. The
// framework builds cloudprovider.InstancesV2 on it: providerID parsing
// (rancher://<host uuid>, the existing CCM's InstanceID), the lookup by
// name when a Node has no providerID yet, a shared cache served from
// ListInstances (one paginated host list per TTL however many Nodes), and
// the rule that only ErrNotFound means "gone".
//
// A host's other addresses are behind its ipAddresses link: every host
// list asks for them embedded (include=ipAddresses), so the steady state
// is one host list per TTL and no per-host request. A host answered
// without them (a server that ignores include) has its link read instead,
// kept for the same TTL, so that link is read at most once per TTL, by a
// list or a direct lookup alike.
type instances struct {
	api *cloud.API
	cfg *Config
	ips *ipCache
	// agents keeps the agent IPs of every complete host list made here,
	// for the load balancers (lb_agents.go).
	agents *agentIPs
}

var _ framework.Instances = (*instances)(nil)

func newInstances(a *cloud.API, cfg *Config, env *framework.Env, agents *agentIPs) *instances {
	return &instances{api: a, cfg: cfg, agents: agents, ips: &ipCache{api: a, ttl: hostTTL(env), now: time.Now, byHost: map[string]ipEntry{}}}
}

// hostTTL is how long what a host list told is kept: the framework's
// instance-cache TTL (--instance-cache-ttl), which the host addresses and
// the load balancers' agent IPs (lb_agents.go) follow too.
func hostTTL(env *framework.Env) time.Duration {
	if env.InstanceCacheTTL == 0 {
		return framework.DefaultInstanceCacheTTL
	}
	return env.InstanceCacheTTL
}

// InstanceByID returns the host whose uuid is id. A host Cattle reports
// removed or purged, or a complete list of the hosts with that uuid that
// holds none, wraps framework.ErrNotFound; every other failure (a 401, a
// 5xx, a timeout) stays an error, so the Node is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	if id == "" || strings.ContainsAny(id, "/?#") {
		return nil, fmt.Errorf("%q is not a Cattle host uuid", id)
	}
	// Not removed_null: a removed host is listed too, and is gone.
	hosts, err := cloud.ListAll[listedHost](ctx, i.api, "hosts.list", rancher.HOST_TYPE, withIPs(map[string]any{"uuid": id}), listPageSize)
	if err != nil {
		return nil, err
	}
	var found *listedHost
	for k := range hosts {
		h := &hosts[k]
		switch {
		case h.Uuid == "":
			return nil, fmt.Errorf("listing hosts: malformed response: host %q has no uuid", h.Id)
		case h.Uuid != id:
			// Cattle filters hosts by uuid (a collection filter of the
			// host schema): skipped, a garbled uuid would make the host
			// gone, and its Node deleted.
			return nil, fmt.Errorf("listing hosts with uuid %s: malformed response: the answer holds host %q with uuid %q", id, h.Id, h.Uuid)
		case found != nil:
			return nil, fmt.Errorf("hosts %s and %s both have the uuid %s", found.Id, h.Id, id)
		}
		found = h
	}
	if found == nil {
		return nil, framework.NotFound("no host with uuid %s", id)
	}
	isGone, err := gone(&found.Host)
	switch {
	case err != nil:
		return nil, fmt.Errorf("listing hosts: %w", err)
	case isGone:
		return nil, framework.NotFound("host %s (uuid %s) is %s", found.Id, id, found.State)
	}
	return i.convert(ctx, found)
}

// InstanceByName returns the host backing the Node called name, matched
// as the existing CCM matched them: hostnames compared case-insensitively,
// and by their first label when one is a fully-qualified name and the
// other is not (Node "node-1" is host "Node-1.example.com"). A complete
// list without a match is a not-found; two matches are an error, not a
// guess.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	hosts, err := i.list(ctx)
	if err != nil {
		return nil, err
	}
	var found []*listedHost
	malformed := 0
	for k := range hosts {
		h := &hosts[k]
		if h.Id == "" || h.Uuid == "" || h.Hostname == "" {
			// Cattle gives every host all three: this one may be the
			// Node's, under a name the answer lost.
			malformed++
			continue
		}
		if !sameHost(name, h.Hostname) {
			continue
		}
		isGone, err := gone(&h.Host)
		if err != nil {
			return nil, fmt.Errorf("listing hosts: %w", err)
		}
		if !isGone {
			found = append(found, h)
		}
	}
	h, err := framework.PickByName("host", name, found, malformed, func(h *listedHost) string { return h.Id })
	if err != nil {
		return nil, err
	}
	return i.convert(ctx, h)
}

// ListInstances returns every live host of the environment: one host list
// (all its pages) with the hosts' addresses embedded; a host answered
// without them has its ipAddresses link read, at most once per TTL. Each host is listed under its lower-cased hostname and, when that
// is fully qualified, its first label as an alias, the names a Node
// carries. A host whose addresses cannot be read, or that is malformed,
// is left out and logged: the others still serve their Nodes, and a Node
// whose host is missing is looked up directly.
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	hosts, err := i.list(ctx)
	if err != nil {
		return nil, err
	}
	live := make([]*listedHost, 0, len(hosts))
	for k := range hosts {
		h := &hosts[k]
		switch isGone, err := gone(&h.Host); {
		case err != nil:
			klog.FromContext(ctx).Error(err, "Leaving a host out of the instance list", "hostID", h.Id, "hostname", h.Hostname)
		case !isGone:
			live = append(live, h)
		}
	}
	i.ips.prune(live)
	out := make([]*framework.Instance, len(live))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ipReadParallelism)
	for k, h := range live {
		g.Go(func() error {
			inst, err := i.convert(gctx, h)
			if err != nil {
				klog.FromContext(ctx).Error(err, "Leaving a host out of the instance list", "hostID", h.Id, "hostname", h.Hostname)
				return nil
			}
			out[k] = inst
			return nil
		})
	}
	_ = g.Wait() // convert's errors are logged, not returned
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("reading the hosts' addresses: %w", err)
	}
	kept := out[:0]
	for _, inst := range out {
		if inst != nil {
			kept = append(kept, inst)
		}
	}
	return kept, nil
}

// list reads every host Cattle has not removed, their addresses embedded,
// and hands the list to the load balancers' agent IPs.
func (i *instances) list(ctx context.Context) ([]listedHost, error) {
	done := i.agents.listing()
	hosts, err := cloud.ListAll[listedHost](ctx, i.api, "hosts.list", rancher.HOST_TYPE, withIPs(map[string]any{"removed_null": "1"}), listPageSize)
	if err != nil {
		return nil, err
	}
	done(hosts)
	return hosts, nil
}

// withIPs adds include=ipAddresses to filters: Cattle then embeds each
// host's ipAddresses link in the list (the link is among the host
// schema's includeableLinks), so one list carries every host's addresses.
func withIPs(filters map[string]any) map[string]any {
	filters["include"] = "ipAddresses"
	return filters
}

// convert maps a host to what a Node needs: its addresses are the
// embedded ones, or else its ipAddresses link's (cached). A host without
// an id, a uuid or labels, with a label value that is no string, or whose
// ipAddresses are none (Cattle lists at least the agent's) or hold one
// that is no IP, is malformed. An IP in a label (user data) that is no IP
// is logged and left out, so the Node keeps its other addresses.
func (i *instances) convert(ctx context.Context, lh *listedHost) (*framework.Instance, error) {
	h := &lh.Host
	switch {
	case h.Id == "" || h.Uuid == "":
		return nil, fmt.Errorf("malformed response: host %q (%s) has no id or uuid", h.Id, h.Hostname)
	case h.Labels == nil:
		// Cattle always answers a host's labels, {} for none: without
		// them the Node would be initialized with no zone or region,
		// labels it keeps.
		return nil, fmt.Errorf("malformed response: host %s (%s) has no labels", h.Id, h.Hostname)
	}
	for k, v := range h.Labels {
		if _, ok := v.(string); !ok {
			// Cattle's label values are strings: a number or an
			// object is half an answer, not a value to print.
			return nil, fmt.Errorf("malformed response: host %s (%s): label %q is not a string", h.Id, h.Hostname, k)
		}
	}
	var ips []rancher.IpAddress
	if lh.IpAddresses != nil {
		ips = *lh.IpAddresses
	} else {
		var err error
		if ips, err = i.ips.get(ctx, h); err != nil {
			return nil, err
		}
	}
	if err := checkIPs(h, ips); err != nil {
		return nil, err
	}
	addrs, err := nodeAddresses(h, ips, i.cfg.ExternalIPLabels)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Ignoring malformed host addresses", "hostID", h.Id)
	}
	topo, skipped := hostTopology(h, i.cfg)
	if len(skipped) > 0 {
		klog.FromContext(ctx).Info("Ignoring host values that cannot be Node label values", "hostID", h.Id, "values", skipped)
	}
	name := strings.ToLower(h.Hostname)
	var aliases []string
	if short, _, fqdn := strings.Cut(name, "."); fqdn && short != "" {
		aliases = []string{short}
	}
	return &framework.Instance{
		ID:        h.Uuid,
		Name:      name,
		Aliases:   aliases,
		Type:      topo.Type,
		Region:    topo.Region,
		Zone:      topo.Zone,
		Shutdown:  shutdown(h),
		Addresses: addrs,
	}, nil
}

// gone reports whether Cattle reports the host as no longer existing
// (removed): every other state, inactive, disconnected and removing
// included, exists.
func gone(h *rancher.Host) (bool, error) { return cloud.Removed("host", h.Id, h.State, h.Removed) }

// shutdown reports whether the host is down but not deleted: deactivated
// in Rancher (inactive), or its agent disconnected. A host whose agent is
// reconnecting is not: it is expected back at once.
func shutdown(h *rancher.Host) bool {
	return h.State == hostInactive || h.State == hostDisconnected || h.AgentState == hostDisconnected
}

// sameHost reports whether the Node name and a host's hostname name the
// same machine, as the existing CCM compared them: case-insensitively, and
// by the first label alone when exactly one of them is fully qualified.
func sameHost(nodeName, hostname string) bool {
	a, b := strings.ToLower(nodeName), strings.ToLower(hostname)
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	shortA, _, fqdnA := strings.Cut(a, ".")
	shortB, _, fqdnB := strings.Cut(b, ".")
	return fqdnA != fqdnB && shortA == shortB
}

// ipCache keeps each host's ipAddresses, read from its link when a list
// did not embed them, for ttl, so a host's link is read
// at most once per TTL whoever asks; concurrent readers of one host share
// one request.
type ipCache struct {
	api *cloud.API
	ttl time.Duration
	now func() time.Time

	flight singleflight.Group
	mu     sync.Mutex
	byHost map[string]ipEntry
}

type ipEntry struct {
	at  time.Time
	ips []rancher.IpAddress
}

// get returns h's addresses, read from its ipAddresses link unless read
// within the TTL.
func (c *ipCache) get(ctx context.Context, h *rancher.Host) ([]rancher.IpAddress, error) {
	if ips, ok := c.fresh(h.Id); ok {
		return ips, nil
	}
	ch := c.flight.DoChan(h.Id, func() (any, error) {
		if ips, ok := c.fresh(h.Id); ok {
			return ips, nil
		}
		ips, err := cloud.GetLink[rancher.IpAddress](context.WithoutCancel(ctx), c.api, "hosts.ipAddresses", h.Resource, "ipAddresses")
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.byHost[h.Id] = ipEntry{at: c.now(), ips: ips}
		c.mu.Unlock()
		return ips, nil
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("reading the addresses of host %s: %w", h.Id, context.Cause(ctx))
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		ips, _ := res.Val.([]rancher.IpAddress)
		return ips, nil
	}
}

func (c *ipCache) fresh(hostID string) ([]rancher.IpAddress, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byHost[hostID]
	return e.ips, ok && c.now().Sub(e.at) < c.ttl
}

// prune forgets the hosts not in live, so the cache holds only the
// environment's hosts.
func (c *ipCache) prune(live []*listedHost) {
	keep := make(map[string]bool, len(live))
	for _, h := range live {
		keep[h.Id] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.byHost {
		if !keep[id] {
			delete(c.byHost, id)
		}
	}
}
