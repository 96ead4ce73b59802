package openstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file holds the Octavia calls: reading load balancers (decoded as
// lb_records.go says) and their children, creating one, and applying one
// planned write. Every write answered 409 (the
// load balancer is PENDING_* and immutable) wraps framework.ErrProvisioning,
// so the pipeline requeues rather than fails.

// octaviaAPI is the Octavia API of one region.
type octaviaAPI struct {
	lb *gophercloud.ServiceClient
}

func lbOp(ctx context.Context, name string) context.Context { return cloudapi.WithOperation(ctx, name) }

// octaviaError wraps a failed call: 409 is "busy, retry", the rest keep
// the API's status and message.
func octaviaError(what string, err error) error {
	if responseIs(err, http.StatusConflict) {
		return fmt.Errorf("%s: %w: %w", what, framework.ErrProvisioning, cloud.ServiceError(err))
	}
	return fmt.Errorf("%s: %w", what, cloud.ServiceError(err))
}

func responseIs(err error, status int) bool {
	var code gophercloud.ErrUnexpectedResponseCode
	return errors.As(err, &code) && code.Actual == status
}

// getLB reads one load balancer; Octavia's 404 wraps ErrNotFound.
func (o *octaviaAPI) getLB(ctx context.Context, id string) (*octaviaLB, error) {
	var body struct {
		LB *lbRecord `json:"loadbalancer"`
	}
	resp, err := o.lb.Get(lbOp(ctx, "loadbalancers.get"), o.lb.ServiceURL("lbaas", "loadbalancers", id), &body, nil)
	closeBody(resp)
	switch {
	case cloud.IsAPINotFound(err):
		return nil, fmt.Errorf("load balancer %s: %w (%w)", id, framework.ErrNotFound, cloud.ServiceError(err))
	case err != nil:
		return nil, fmt.Errorf("getting load balancer %s: %w", id, cloud.ServiceError(err))
	case body.LB == nil:
		return nil, fmt.Errorf("getting load balancer %s: malformed response: no load balancer", id)
	}
	if err := body.LB.check(); err != nil {
		return nil, fmt.Errorf("getting load balancer %s: %w", id, err)
	}
	return body.LB.octaviaLB(), nil
}

// listLBs lists the load balancers (all pages), those named name unless
// name is "".
func (o *octaviaAPI) listLBs(ctx context.Context, name string) ([]*octaviaLB, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	var out []*octaviaLB
	err := cloud.EachPage(lbOp(ctx, "loadbalancers.list"), o.lb, cloud.WithQuery(o.lb.ServiceURL("lbaas", "loadbalancers"), q), "loadbalancers",
		func(page []lbRecord) error {
			for i := range page {
				if err := page[i].check(); err != nil {
					return err
				}
				out = append(out, page[i].octaviaLB())
			}
			return nil
		})
	switch {
	case err != nil && name != "":
		return nil, fmt.Errorf("listing load balancers named %q: %w", name, err)
	case err != nil:
		return nil, fmt.Errorf("listing load balancers: %w", err)
	}
	return out, nil
}

// loadChildren reads lb's listeners, pools, members and health monitors:
// 2 + one members list per pool + one GET per monitor. It keeps the
// members themselves, not only their digest, with keepMembers.
func (o *octaviaAPI) loadChildren(ctx context.Context, lb *octaviaLB, keepMembers bool) error {
	id := lb.LB.ID
	q := url.Values{"loadbalancer_id": {id}}
	lrecs, err := cloud.ListAll[listenerRecord](lbOp(ctx, "listeners.list"), o.lb, cloud.WithQuery(o.lb.ServiceURL("lbaas", "listeners"), q), "listeners")
	if err != nil {
		return fmt.Errorf("listing listeners of load balancer %s: %w", id, err)
	}
	ls := make([]listeners.Listener, len(lrecs))
	for i := range lrecs {
		ls[i] = lrecs[i].Listener
	}
	precs, err := cloud.ListAll[poolRecord](lbOp(ctx, "pools.list"), o.lb, cloud.WithQuery(o.lb.ServiceURL("lbaas", "pools"), q), "pools")
	if err != nil {
		return fmt.Errorf("listing pools of load balancer %s: %w", id, err)
	}
	ps := make([]pools.Pool, len(precs))
	members := make(map[string]poolMembers, len(precs))
	mons := map[string]monitors.Monitor{}
	for i := range precs {
		p := precs[i].Pool
		p.Members = nil
		ps[i] = p
		list, err := cloud.ListAll[memberRecord](lbOp(ctx, "members.list"), o.lb, o.lb.ServiceURL("lbaas", "pools", p.ID, "members"), "members")
		if err != nil {
			return fmt.Errorf("listing members of pool %s: %w", p.ID, err)
		}
		members[p.ID] = newPoolMembers(list, keepMembers)
		if p.MonitorID == "" {
			continue
		}
		m, err := monitors.Get(lbOp(ctx, "healthmonitors.get"), o.lb, p.MonitorID).Extract()
		if err != nil {
			return fmt.Errorf("getting health monitor %s of pool %s: %w", p.MonitorID, p.ID, cloud.ServiceError(err))
		}
		mons[p.ID] = *m
	}
	lb.Listeners, lb.Pools, lb.Members, lb.Monitors, lb.loaded = ls, ps, members, mons, true
	return nil
}

// create makes the load balancer, fully populated unless opts has no
// listeners. It returns the load balancer and the answer.
func (o *octaviaAPI) create(ctx context.Context, opts loadbalancers.CreateOpts) (*octaviaLB, *createdLB, error) {
	b, err := createBody(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("creating load balancer: %w", err)
	}
	var body struct {
		LB *createdLB `json:"loadbalancer"`
	}
	resp, err := o.lb.Post(lbOp(ctx, "loadbalancers.create"), o.lb.ServiceURL("lbaas", "loadbalancers"), b, &body, nil)
	closeBody(resp)
	if err != nil {
		return nil, nil, octaviaError("creating load balancer", err)
	}
	c := body.LB
	if c == nil {
		return nil, nil, errors.New("creating load balancer: malformed response: no load balancer")
	}
	if err := c.check(); err != nil {
		return nil, nil, fmt.Errorf("creating load balancer: %w", err)
	}
	rec := lbRecord{lbFields: c.lbFields, UpdatedAt: c.UpdatedAt}
	for _, l := range c.Listeners {
		rec.Listeners = append(rec.Listeners, idRef{l.ID})
	}
	for _, p := range c.Pools {
		rec.Pools = append(rec.Pools, idRef{p.ID})
	}
	return rec.octaviaLB(), c, nil
}

// createBody is the body of a create: what gophercloud's
// CreateOpts.ToLoadBalancerCreateMap makes, and checks, but encoded once.
// Its checks (required fields) run on the tree without the pools' members,
// which it would encode and decode twice over (members are made whole by
// desiredPool).
func createBody(opts loadbalancers.CreateOpts) (json.RawMessage, error) {
	skeleton := opts
	skeleton.Listeners = make([]listeners.CreateOpts, len(opts.Listeners))
	for i, l := range opts.Listeners {
		if l.DefaultPool != nil {
			p := *l.DefaultPool
			p.Members = nil
			l.DefaultPool = &p
		}
		skeleton.Listeners[i] = l
	}
	if _, err := skeleton.ToLoadBalancerCreateMap(); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"loadbalancer": opts})
}

// deleteLB deletes a load balancer (and its children with cascade); 404
// wraps ErrNotFound.
func (o *octaviaAPI) deleteLB(ctx context.Context, id string, cascade bool) error {
	err := loadbalancers.Delete(lbOp(ctx, "loadbalancers.delete"), o.lb, id, loadbalancers.DeleteOpts{Cascade: cascade}).ExtractErr()
	if cloud.IsAPINotFound(err) {
		return fmt.Errorf("load balancer %s: %w", id, framework.ErrNotFound)
	}
	if err != nil {
		return octaviaError("deleting load balancer "+id, err)
	}
	return nil
}

// apply makes one planned write on load balancer lbID. A child that is
// already gone counts as deleted.
func (o *octaviaAPI) apply(ctx context.Context, lbID string, a action) error {
	var err error
	switch a.kind {
	case actDeleteListener:
		err = ignoreNotFound(listeners.Delete(lbOp(ctx, "listeners.delete"), o.lb, a.listenerID).ExtractErr())
	case actCreateListener:
		opts := listenerCreateOpts(a.want, false)
		opts.LoadbalancerID, opts.DefaultPoolID = lbID, a.reusePoolID
		_, err = listeners.Create(lbOp(ctx, "listeners.create"), o.lb, opts).Extract()
	case actUpdateListener:
		_, err = listeners.Update(lbOp(ctx, "listeners.update"), o.lb, a.listenerID, listenerUpdateOpts(a.want)).Extract()
	case actDeletePool:
		err = ignoreNotFound(pools.Delete(lbOp(ctx, "pools.delete"), o.lb, a.poolID).ExtractErr())
	case actCreatePool:
		opts := poolCreateOpts(&a.want.Pool, false)
		opts.ListenerID = a.listenerID
		_, err = pools.Create(lbOp(ctx, "pools.create"), o.lb, opts).Extract()
	case actUpdatePool:
		_, err = pools.Update(lbOp(ctx, "pools.update"), o.lb, a.poolID, poolUpdateOpts(&a.want.Pool)).Extract()
	case actBatchMembers:
		err = o.batchUpdateMembers(lbOp(ctx, "members.batch_update"), a.poolID, a.want.Pool.Members)
	case actCreateMember:
		_, err = pools.CreateMember(lbOp(ctx, "members.create"), o.lb, a.poolID, memberCreateOpts(*a.member)).Extract()
	case actDeleteMember:
		err = ignoreNotFound(pools.DeleteMember(lbOp(ctx, "members.delete"), o.lb, a.poolID, a.memberID).ExtractErr())
	case actCreateMonitor:
		opts := monitorCreateOpts(a.want.Pool.Monitor)
		opts.PoolID = a.poolID
		_, err = monitors.Create(lbOp(ctx, "healthmonitors.create"), o.lb, opts).Extract()
	case actUpdateMonitor:
		_, err = monitors.Update(lbOp(ctx, "healthmonitors.update"), o.lb, a.monitorID, monitorUpdateOpts(a.want.Pool.Monitor)).Extract()
	case actDeleteMonitor:
		err = ignoreNotFound(monitors.Delete(lbOp(ctx, "healthmonitors.delete"), o.lb, a.monitorID).ExtractErr())
	}
	if err != nil {
		return octaviaError(a.String(), err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if cloud.IsAPINotFound(err) {
		return nil
	}
	return err
}

// listenerCreateOpts is a listener; with its default pool (members and
// monitor included) inside a fully populated create.
func listenerCreateOpts(w *listenerSpec, withPool bool) listeners.CreateOpts {
	opts := listeners.CreateOpts{
		Name: w.Name, Protocol: listeners.Protocol(w.Protocol), ProtocolPort: w.Port,
		ConnLimit: new(w.ConnLimit), AllowedCIDRs: w.AllowedCIDRs, Tags: w.Tags,
	}
	if t := w.Timeouts; t != nil {
		opts.TimeoutClientData, opts.TimeoutMemberConnect = new(t.ClientData), new(t.MemberConnect)
		opts.TimeoutMemberData, opts.TimeoutTCPInspect = new(t.MemberData), new(t.TCPInspect)
	}
	if httpListener(w.Protocol) && w.XFF {
		opts.InsertHeaders = map[string]string{headerXForwardedFor: "true"}
	}
	if w.Protocol == "TERMINATED_HTTPS" {
		opts.DefaultTlsContainerRef = w.TLSRef
	}
	if withPool {
		p := poolCreateOpts(&w.Pool, true)
		opts.DefaultPool = &p
	}
	return opts
}

// listenerUpdateOpts sets every setting the CCM manages.
func listenerUpdateOpts(w *listenerSpec) listeners.UpdateOpts {
	opts := listeners.UpdateOpts{ConnLimit: new(w.ConnLimit), AllowedCIDRs: new(w.AllowedCIDRs)}
	if w.AllowedCIDRs == nil {
		opts.AllowedCIDRs = new([]string{})
	}
	if t := w.Timeouts; t != nil {
		opts.TimeoutClientData, opts.TimeoutMemberConnect = new(t.ClientData), new(t.MemberConnect)
		opts.TimeoutMemberData, opts.TimeoutTCPInspect = new(t.MemberData), new(t.TCPInspect)
	}
	if httpListener(w.Protocol) {
		headers := map[string]string{}
		if w.XFF {
			headers[headerXForwardedFor] = "true"
		}
		opts.InsertHeaders = &headers
	}
	if w.Protocol == "TERMINATED_HTTPS" {
		opts.DefaultTlsContainerRef = new(w.TLSRef)
	}
	return opts
}

// poolCreateOpts is a pool; with its members and monitor only inside a
// fully populated create (Octavia takes them nowhere else).
func poolCreateOpts(p *poolSpec, withChildren bool) pools.CreateOpts {
	opts := pools.CreateOpts{Name: p.Name, Protocol: pools.Protocol(p.Protocol), LBMethod: pools.LBMethod(p.Method)}
	if p.Persistence != "" {
		opts.Persistence = &pools.SessionPersistence{Type: p.Persistence}
	}
	if withChildren {
		for _, m := range p.Members {
			opts.Members = append(opts.Members, memberCreateOpts(m))
		}
		if p.Monitor != nil {
			opts.Monitor = monitorCreateOpts(p.Monitor)
		}
	}
	return opts
}

func poolUpdateOpts(p *poolSpec) pools.UpdateOpts {
	// An empty SessionPersistence sends null, removing it.
	return pools.UpdateOpts{LBMethod: pools.LBMethod(p.Method), Persistence: &pools.SessionPersistence{Type: p.Persistence}}
}

func memberCreateOpts(m memberSpec) pools.CreateMemberOpts {
	opts := pools.CreateMemberOpts{Name: m.Name, Address: m.Address, ProtocolPort: m.Port, SubnetID: m.SubnetID}
	if m.MonitorPort != 0 {
		opts.MonitorPort = new(m.MonitorPort)
	}
	return opts
}

// batchUpdateMembers replaces the members of a pool (PUT, 202), as
// gophercloud's pools.BatchUpdateMembers does, with a body encoded from
// structs: a pool of a big cluster has a member per node.
func (o *octaviaAPI) batchUpdateMembers(ctx context.Context, poolID string, members []memberSpec) error {
	body := struct {
		Members []batchMember `json:"members"`
	}{make([]batchMember, len(members))}
	for i, m := range members {
		body.Members[i] = batchMember{Address: m.Address, ProtocolPort: m.Port, Name: m.Name, SubnetID: m.SubnetID}
		if m.MonitorPort != 0 {
			body.Members[i].MonitorPort = new(m.MonitorPort)
		}
	}
	resp, err := o.lb.Put(ctx, o.lb.ServiceURL("lbaas", "pools", poolID, "members"), body, nil, &gophercloud.RequestOpts{OkCodes: []int{http.StatusAccepted}})
	closeBody(resp)
	return err
}

// batchMember is a member of a batch update. It always sends
// monitor_port, null for none: Octavia keeps the attributes a batch leaves
// out, so a monitor port could otherwise never be removed.
type batchMember struct {
	Address      string `json:"address"`
	ProtocolPort int    `json:"protocol_port"`
	Name         string `json:"name"`
	SubnetID     string `json:"subnet_id,omitempty"`
	MonitorPort  *int   `json:"monitor_port"`
}

func monitorCreateOpts(m *monitorSpec) monitors.CreateOpts {
	return monitors.CreateOpts{
		Name: m.Name, Type: m.Type, Delay: m.Delay, Timeout: m.Timeout, MaxRetries: m.MaxRetries,
		MaxRetriesDown: m.MaxRetriesDown, URLPath: m.URLPath, HTTPMethod: m.HTTPMethod, ExpectedCodes: m.ExpectedCodes,
	}
}

func monitorUpdateOpts(m *monitorSpec) monitors.UpdateOpts {
	return monitors.UpdateOpts{
		Delay: m.Delay, Timeout: m.Timeout, MaxRetries: m.MaxRetries, MaxRetriesDown: m.MaxRetriesDown,
		URLPath: m.URLPath, HTTPMethod: m.HTTPMethod, ExpectedCodes: m.ExpectedCodes,
	}
}
