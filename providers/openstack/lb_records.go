package openstack

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
)

// This file is how the driver decodes Octavia's answers: into
// gophercloud's types, less what it does not use and would cost the most
// (a pool's references to its members, a create's whole tree), and the
// tree a fully populated create made.

// lbRecord is an Octavia load balancer as the driver decodes it:
// gophercloud's fields, with the listener and pool references as IDs and
// updated_at as Octavia wrote it (compared, never parsed).
type lbRecord struct {
	lbFields
	Listeners []idRef `json:"listeners"`
	Pools     []idRef `json:"pools"`
	UpdatedAt string  `json:"updated_at"` // null: ""
}

// lbFields is loadbalancers.LoadBalancer without its JSON decoder.
type lbFields loadbalancers.LoadBalancer

type idRef struct {
	ID string `json:"id"`
}

// check rejects a load balancer the driver cannot act on: without ID, in
// a provisioning status Octavia does not have, or with a VIP port that is
// no Neutron ID or a VIP address that is no IP. Octavia's API makes the
// VIP port before it answers a create, so both are always there: the
// floating IP is found by the port, and the status names the VIP (read as
// missing, a delete would leave the floating IP behind, and the status
// would lose an address).
func (r *lbFields) check() error {
	switch {
	case r.ID == "":
		return errors.New("malformed response: a load balancer without ID")
	case !slices.Contains(provisioningStatuses, r.ProvisioningStatus):
		return fmt.Errorf("malformed response: load balancer %s: provisioning_status %q", r.ID, r.ProvisioningStatus)
	case uuid.Validate(r.VipPortID) != nil:
		return fmt.Errorf("malformed response: load balancer %s: vip_port_id %q is no ID", r.ID, r.VipPortID)
	}
	if _, err := netip.ParseAddr(r.VipAddress); err != nil {
		return fmt.Errorf("malformed response: load balancer %s: vip_address %q is no IP", r.ID, r.VipAddress)
	}
	return nil
}

// provisioningStatuses are Octavia's provisioning statuses.
var provisioningStatuses = []string{statusActive, statusDeleted, statusError, "PENDING_CREATE", statusPendingUpdate, statusPendingDelete}

func (r *lbRecord) octaviaLB() *octaviaLB {
	lb := &octaviaLB{LB: loadbalancers.LoadBalancer(r.lbFields), updated: r.UpdatedAt, shape: shapeOf(r.Listeners, r.Pools)}
	lb.LB.Listeners, lb.LB.Pools = nil, nil
	return lb
}

// shapeOf names a set of listeners and pools by their IDs, in any order.
func shapeOf(listenerIDs, poolIDs []idRef) string {
	ids := func(refs []idRef) string {
		out := make([]string, len(refs))
		for i, r := range refs {
			out[i] = r.ID
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	return ids(listenerIDs) + ";" + ids(poolIDs)
}

// poolRecord is an Octavia pool without its member references (a pool
// lists the ID of each member: a thousand of them in a big cluster).
type poolRecord struct {
	pools.Pool
	Members skipped `json:"members"`
}

// skipped is a JSON value that is not decoded.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// createdLB is Octavia's answer to a create: the load balancer and, when
// fully populated, the tree it made (pools with their health monitor; the
// members are not decoded).
type createdLB struct {
	lbFields
	UpdatedAt string           `json:"updated_at"`
	Listeners []listenerRecord `json:"listeners"`
	Pools     []createdPool    `json:"pools"`
}

type createdPool struct {
	pools.Pool
	Members skipped           `json:"members"`
	Monitor *monitors.Monitor `json:"healthmonitor"`
}

// listenerRecord is an Octavia listener, without the pools some answers
// hold in full.
type listenerRecord struct {
	listeners.Listener
	DefaultPool skipped `json:"default_pool"`
	Pools       skipped `json:"pools"`
}

// createdTree is the tree a fully populated create made, the members
// being the desired ones sent (want); nil when the answer does not tell
// all of it.
func createdTree(c *createdLB, want []listenerSpec) *lbTree {
	byKey := map[string]*listenerSpec{}
	for i := range want {
		byKey[want[i].key()] = &want[i]
	}
	t := &lbTree{members: map[string]poolMembers{}, monitors: map[string]monitors.Monitor{}}
	poolWant := map[string]*listenerSpec{}
	var ls, ps []idRef
	for _, l := range c.Listeners {
		w := byKey[listenerKey(l.Protocol, l.ProtocolPort)]
		if w == nil || l.DefaultPoolID == "" {
			return nil
		}
		t.listeners, poolWant[l.DefaultPoolID] = append(t.listeners, l.Listener), w
		ls = append(ls, idRef{l.ID})
	}
	for _, p := range c.Pools {
		w := poolWant[p.ID]
		if w == nil || p.MonitorID != "" && (p.Monitor == nil || p.Monitor.ID != p.MonitorID) {
			return nil
		}
		if p.Monitor != nil && p.MonitorID != "" {
			t.monitors[p.ID] = *p.Monitor
		}
		pool := p.Pool
		pool.Members, pool.Monitor = nil, monitors.Monitor{}
		t.pools, t.members[p.ID] = append(t.pools, pool), desiredPoolMembers(w.Pool.Members)
		ps = append(ps, idRef{p.ID})
	}
	if len(t.listeners) != len(want) {
		return nil
	}
	t.shape = shapeOf(ls, ps)
	return t
}
