package main

import (
	"net/http"
	"slices"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/cloudipstatus"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
)

// loadBalancers runs a Service's load balancer through its life as the
// existing CCM does: a cloud IP, a load balancer waited on until active,
// the cloud IP mapped onto it, changes, then the delete, after which the
// CCM destroys the cloud IP without reading the load balancer again.
func (r *run) loadBalancers() error {
	const name = "fidelity.default.kubernetes"
	cip, err := r.c.CreateCloudIP(r.ctx, brightbox.CloudIPOptions{Name: ptr(name)})
	if err != nil {
		return err
	}
	if err := r.resolves(cip); err != nil {
		return err
	}
	lb, err := r.c.CreateLoadBalancer(r.ctx, brightbox.LoadBalancerOptions{
		Name: ptr(name), Policy: balancingpolicy.LeastConnections,
		Nodes: []brightbox.LoadBalancerNode{{Node: r.node.ID}},
		Listeners: []brightbox.LoadBalancerListener{
			{Protocol: listenerprotocol.Tcp, In: 80, Out: 31080, Timeout: 50000, ProxyProtocol: proxyprotocol.V2},
		},
		Healthcheck: &brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Tcp, Port: 31080},
	})
	if err != nil {
		return err
	}
	if err := r.expect(lb.Status == loadbalancerstatus.Creating && len(lb.Nodes) == 1 && lb.Nodes[0].ID == r.node.ID &&
		lb.Healthcheck.Interval > 0, "created load balancer = %+v", lb); err != nil {
		return err
	}
	if err := r.waitFor("load balancer active", func() (bool, error) {
		lb, err = r.c.LoadBalancer(r.ctx, lb.ID)
		return err == nil && lb.Status == loadbalancerstatus.Active, err
	}); err != nil {
		return err
	}
	if _, err := r.c.MapCloudIP(r.ctx, cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID}); err != nil {
		return err
	}
	if err := r.waitFor("cloud IP on the load balancer", func() (bool, error) {
		lb, err = r.c.LoadBalancer(r.ctx, lb.ID)
		return err == nil && slices.ContainsFunc(lb.CloudIPs, func(c brightbox.CloudIP) bool { return c.ID == cip.ID }), err
	}); err != nil {
		return err
	}
	if err := r.changeLoadBalancer(lb); err != nil {
		return err
	}
	return r.deleteLoadBalancer(lb, cip)
}

// changeLoadBalancer updates the load balancer, adds and removes a
// listener and a node, and locks it against deletion.
func (r *run) changeLoadBalancer(lb *brightbox.LoadBalancer) error {
	lb, err := r.c.UpdateLoadBalancer(r.ctx, brightbox.LoadBalancerOptions{ID: lb.ID, Policy: balancingpolicy.RoundRobin,
		Healthcheck: &brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 31080, Request: "/healthz"}})
	if err != nil {
		return err
	}
	if err := r.expect(lb.Policy == balancingpolicy.RoundRobin && lb.Healthcheck.Request == "/healthz" && len(lb.Listeners) == 1,
		"updated load balancer = %+v", lb); err != nil {
		return err
	}
	extra := []brightbox.LoadBalancerListener{{Protocol: listenerprotocol.Http, In: 8080, Out: 31081, Timeout: 50000}}
	if lb, err = r.c.AddListenersToLoadBalancer(r.ctx, lb.ID, extra); err != nil {
		return err
	}
	if err := r.expect(len(lb.Listeners) == 2, "listeners after add = %+v", lb.Listeners); err != nil {
		return err
	}
	if lb, err = r.c.RemoveListenersFromLoadBalancer(r.ctx, lb.ID, extra); err != nil {
		return err
	}
	if err := r.expect(len(lb.Listeners) == 1 && lb.Listeners[0].In == 80, "listeners after remove = %+v", lb.Listeners); err != nil {
		return err
	}
	node := []brightbox.LoadBalancerNode{{Node: r.node.ID}}
	if lb, err = r.c.RemoveNodesFromLoadBalancer(r.ctx, lb.ID, node); err != nil {
		return err
	}
	if lb, err = r.c.AddNodesToLoadBalancer(r.ctx, lb.ID, node); err != nil {
		return err
	}
	if err := r.expect(len(lb.Nodes) == 1 && lb.Nodes[0].ID == r.node.ID, "nodes = %+v", lb.Nodes); err != nil {
		return err
	}
	if lb, err = r.c.LockLoadBalancer(r.ctx, lb.ID); err != nil {
		return err
	}
	_, err = r.c.DestroyLoadBalancer(r.ctx, lb.ID)
	if err := r.expectStatus(err, http.StatusConflict, "destroy a locked load balancer"); err != nil {
		return err
	}
	_, err = r.c.UnlockLoadBalancer(r.ctx, lb.ID)
	return err
}

// deleteLoadBalancer destroys the load balancer and, without reading it
// again, waits for its cloud IP to be unmapped, as the real API does with
// time, then destroys the cloud IP: nothing is left behind.
func (r *run) deleteLoadBalancer(lb *brightbox.LoadBalancer, cip *brightbox.CloudIP) error {
	lb, err := r.c.DestroyLoadBalancer(r.ctx, lb.ID)
	if err != nil {
		return err
	}
	if err := r.expect(lb.Status == loadbalancerstatus.Deleting, "destroyed load balancer = %s, want deleting", lb.Status); err != nil {
		return err
	}
	if err := r.waitFor("cloud IP unmapped by the deletion", func() (bool, error) {
		c, err := r.c.CloudIP(r.ctx, cip.ID)
		return err == nil && c.Status == cloudipstatus.Unmapped && c.LoadBalancer == nil, err
	}); err != nil {
		return err
	}
	if _, err := r.c.DestroyCloudIP(r.ctx, cip.ID); err != nil {
		return err
	}
	got, err := r.c.LoadBalancer(r.ctx, lb.ID)
	switch {
	case isNotFound(err):
		r.checks++
	case err != nil:
		return err
	default:
		if err := r.expect(got.Status == loadbalancerstatus.Deleted && got.DeletedAt != nil,
			"load balancer after the delete = %s", got.Status); err != nil {
			return err
		}
	}
	cips, err := r.c.CloudIPs(r.ctx)
	if err != nil {
		return err
	}
	return r.expect(!slices.ContainsFunc(cips, func(c brightbox.CloudIP) bool { return c.ID == cip.ID }),
		"cloud IP %s still listed", cip.ID)
}

// apiErrors checks the API's errors as gobrightbox decodes them.
func (r *run) apiErrors() error {
	_, err := r.c.Server(r.ctx, "srv-zzzzz")
	if err := r.expectStatus(err, http.StatusNotFound, "unknown server"); err != nil {
		return err
	}
	_, err = r.c.LoadBalancer(r.ctx, "lba-zzzzz")
	if err := r.expectStatus(err, http.StatusNotFound, "unknown load balancer"); err != nil {
		return err
	}
	_, err = r.c.MapCloudIP(r.ctx, "cip-zzzzz", brightbox.CloudIPAttachment{Destination: r.node.ID})
	return r.expectStatus(err, http.StatusNotFound, "map an unknown cloud IP")
}
