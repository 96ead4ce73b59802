package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file holds the Octavia calls: reading a load balancer with its
// children, and applying one planned write. Every write answered 409 (the
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
		return fmt.Errorf("%s: %w: %w", what, framework.ErrProvisioning, serviceError(err))
	}
	return fmt.Errorf("%s: %w", what, serviceError(err))
}

func responseIs(err error, status int) bool {
	var code gophercloud.ErrUnexpectedResponseCode
	return errors.As(err, &code) && code.Actual == status
}

// getLB reads one load balancer; Octavia's 404 wraps ErrNotFound.
func (o *octaviaAPI) getLB(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	lb, err := loadbalancers.Get(lbOp(ctx, "loadbalancers.get"), o.lb, id).Extract()
	switch {
	case isAPINotFound(err):
		return nil, fmt.Errorf("load balancer %s: %w (%w)", id, framework.ErrNotFound, serviceError(err))
	case err != nil:
		return nil, fmt.Errorf("getting load balancer %s: %w", id, serviceError(err))
	case lb == nil || lb.ID == "":
		return nil, fmt.Errorf("getting load balancer %s: malformed response: no load balancer", id)
	}
	return lb, nil
}

// listLBs lists the load balancers named name (all pages).
func (o *octaviaAPI) listLBs(ctx context.Context, name string) ([]loadbalancers.LoadBalancer, error) {
	pages, err := loadbalancers.List(o.lb, loadbalancers.ListOpts{Name: name}).AllPages(lbOp(ctx, "loadbalancers.list"))
	if err != nil {
		return nil, fmt.Errorf("listing load balancers named %q: %w", name, serviceError(err))
	}
	return loadbalancers.ExtractLoadBalancers(pages)
}

// loadChildren reads lb's listeners, pools, members and health monitors:
// 2 + one members list per pool + one GET per monitor.
func (o *octaviaAPI) loadChildren(ctx context.Context, lb *octaviaLB) error {
	id := lb.LB.ID
	lpages, err := listeners.List(o.lb, listeners.ListOpts{LoadbalancerID: id}).AllPages(lbOp(ctx, "listeners.list"))
	if err != nil {
		return fmt.Errorf("listing listeners of load balancer %s: %w", id, serviceError(err))
	}
	ls, err := listeners.ExtractListeners(lpages)
	if err != nil {
		return err
	}
	ppages, err := pools.List(o.lb, pools.ListOpts{LoadbalancerID: id}).AllPages(lbOp(ctx, "pools.list"))
	if err != nil {
		return fmt.Errorf("listing pools of load balancer %s: %w", id, serviceError(err))
	}
	ps, err := pools.ExtractPools(ppages)
	if err != nil {
		return err
	}
	members := make(map[string][]pools.Member, len(ps))
	mons := map[string]monitors.Monitor{}
	for _, p := range ps {
		mpages, err := pools.ListMembers(o.lb, p.ID, pools.ListMembersOpts{}).AllPages(lbOp(ctx, "members.list"))
		if err != nil {
			return fmt.Errorf("listing members of pool %s: %w", p.ID, serviceError(err))
		}
		if members[p.ID], err = pools.ExtractMembers(mpages); err != nil {
			return err
		}
		if p.MonitorID == "" {
			continue
		}
		m, err := monitors.Get(lbOp(ctx, "healthmonitors.get"), o.lb, p.MonitorID).Extract()
		if err != nil {
			return fmt.Errorf("getting health monitor %s of pool %s: %w", p.MonitorID, p.ID, serviceError(err))
		}
		mons[p.ID] = *m
	}
	lb.Listeners, lb.Pools, lb.Members, lb.Monitors, lb.loaded = ls, ps, members, mons, true
	return nil
}

// create makes the load balancer, fully populated unless opts has no
// listeners.
func (o *octaviaAPI) create(ctx context.Context, opts loadbalancers.CreateOpts) (*loadbalancers.LoadBalancer, error) {
	lb, err := loadbalancers.Create(lbOp(ctx, "loadbalancers.create"), o.lb, opts).Extract()
	if err != nil {
		return nil, octaviaError("creating load balancer", err)
	}
	if lb == nil || lb.ID == "" {
		return nil, errors.New("creating load balancer: malformed response: no load balancer")
	}
	return lb, nil
}

// deleteLB deletes a load balancer (and its children with cascade); 404
// wraps ErrNotFound.
func (o *octaviaAPI) deleteLB(ctx context.Context, id string, cascade bool) error {
	err := loadbalancers.Delete(lbOp(ctx, "loadbalancers.delete"), o.lb, id, loadbalancers.DeleteOpts{Cascade: cascade}).ExtractErr()
	if isAPINotFound(err) {
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
		err = pools.BatchUpdateMembers(lbOp(ctx, "members.batch_update"), o.lb, a.poolID, batchMembers(a.want.Pool.Members)).ExtractErr()
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
	if isAPINotFound(err) {
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

// batchMember is a member of a batch update. It always sends
// monitor_port, null for none: Octavia keeps the attributes a batch leaves
// out, so a monitor port could otherwise never be removed.
type batchMember memberSpec

func (m batchMember) ToBatchMemberUpdateMap() (map[string]any, error) {
	b := map[string]any{"address": m.Address, "protocol_port": m.Port, "name": m.Name, "monitor_port": nil}
	if m.SubnetID != "" {
		b["subnet_id"] = m.SubnetID
	}
	if m.MonitorPort != 0 {
		b["monitor_port"] = m.MonitorPort
	}
	return b, nil
}

func batchMembers(ms []memberSpec) []batchMember {
	out := make([]batchMember, len(ms))
	for i, m := range ms {
		out[i] = batchMember(m)
	}
	return out
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
