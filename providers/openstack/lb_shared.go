package openstack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
)

// This file decides how a Service uses a load balancer that other Services
// use too, as OCCM shares them ([LoadBalancer] max-shared-lb, the
// load-balancer-id annotation on several Services). Octavia tags are the
// record, as in OCCM: the load balancer's tags list the LB names
// (kube_service_<cluster>_<namespace>_<name>) of the Services using it, and
// each listener carries the name of the Service it serves. A Service
// manages only its own listeners (and their pools, members and monitors);
// the primary Service (the one the load balancer was created for, or the
// first to adopt one made outside the CCM) also manages the listeners no
// Service claims, and the floating IP. lb_shared_apply.go makes the writes.

var _ framework.LoadBalancerSharing[LoadBalancerConfig, octaviaLB] = (*lbDriver)(nil)

// Shares implements framework.LoadBalancerSharing: as in OCCM, a Service
// whose load-balancer-id names another Service's load balancer joins it
// with listeners of its own, never taking the other's; this file's rules
// (max-shared-lb, ports in use) decide, with Warnings, whether it may.
func (d *lbDriver) Shares(*octaviaLB, *lbRequest) bool { return true }

// lbShare is how one Service uses a shared load balancer.
type lbShare struct {
	// selfNames are the Service's names on tags: its LB name and, on a
	// load balancer made for it under an older cluster name, that name.
	selfNames []string
	// others are the names of the other Services using the load balancer,
	// sorted.
	others []string
	// primary: the Service manages the listeners and pools no Service
	// claims, and the floating IP.
	primary bool
	// tagged: the load balancer's tags list the Service.
	tagged bool
	// newcomer: the load balancer was neither made for nor tagged with
	// the Service, so it asks to join, and max-shared-lb applies.
	newcomer bool
	// users is the count of other Services that max-shared-lb applies to.
	users int
}

func (s *lbShare) isSelf(name string) bool { return slices.Contains(s.selfNames, name) }

// isServiceName reports whether a tag or name is a Service's LB name.
func isServiceName(s string) bool { return strings.HasPrefix(s, lbNamePrefix) }

// sharing tells whether the Service shares lb, and how; nil when lb is the
// Service's alone (made for it, or adopted with no other Service using it),
// which the driver handles as it always has. A load balancer made for
// another Service is always shared, even once that Service left it. lb
// should have its children loaded: their tags say which Services use it.
//
// Only for a load balancer made outside the CCM (adopted) does sharing ask
// Kubernetes for the other Services whose load-balancer-id names it: a
// Service that adopted it alone did not tag it, and a second Service must
// not take its listeners for unused ones. That read comes from the Service
// informer when it runs (no API call).
func (d *lbDriver) sharing(ctx context.Context, lb *octaviaLB, req *lbRequest, own lbOwnership) (*lbShare, error) {
	s := &lbShare{selfNames: []string{req.Name}}
	if own == lbOwned && lb.LB.Name != req.Name {
		s.selfNames = append(s.selfNames, lb.LB.Name)
	}
	users := map[string]bool{}
	for _, t := range lb.LB.Tags {
		switch {
		case s.isSelf(t):
			s.tagged = true
		case isServiceName(t):
			users[t] = true
		}
	}
	if own == lbForeign && !users[lb.LB.Name] && (!lb.loaded || hasUnclaimedListener(lb)) {
		// Untagged, as OCCM made them before Octavia 2.5 (or as its
		// Service left its listeners without tags): its Service uses it.
		users[lb.LB.Name] = true
	}
	for _, l := range lb.Listeners {
		for _, t := range l.Tags {
			if isServiceName(t) && !s.isSelf(t) {
				users[t] = true
			}
		}
	}
	var peers []*corev1.Service
	if own == lbAdopted {
		var err error
		if peers, err = d.servicesSharingLB(ctx, lb.LB.ID, req.Service); err != nil {
			return nil, err
		}
	}
	others := maps.Clone(users)
	for _, p := range peers {
		others[loadBalancerName(req.ClusterName, p, nil)] = true
	}
	if len(others) == 0 && own != lbForeign {
		return nil, nil
	}
	s.others = slices.Sorted(maps.Keys(others))
	s.users = len(users)
	for _, p := range peers {
		if name := loadBalancerName(req.ClusterName, p, nil); !users[name] && olderService(p, req.Service) {
			s.users++ // adopted it first, untagged
		}
	}
	s.newcomer = !s.tagged && own != lbOwned
	switch own {
	case lbOwned:
		s.primary = true
	case lbAdopted:
		s.primary = !slices.ContainsFunc(peers, func(p *corev1.Service) bool { return olderService(p, req.Service) })
	}
	return s, nil
}

// olderService orders Services by age, then namespace and name: the oldest
// of the Services that adopted a load balancer is its primary.
func olderService(a, b *corev1.Service) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// servicesSharingLB are the other LoadBalancer Services of the cluster
// whose load-balancer-id annotation names lbID: from the Service informer
// once it has synced, else one list call; none without a client.
func (d *lbDriver) servicesSharingLB(ctx context.Context, lbID string, self *corev1.Service) ([]*corev1.Service, error) {
	all, err := d.env.Services(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the Services that share load balancer %s: %w", lbID, err)
	}
	var out []*corev1.Service
	for _, svc := range all {
		if svc.Annotations[AnnotationLoadBalancerID] == lbID && svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
			(svc.Namespace != self.Namespace || svc.Name != self.Name) {
			out = append(out, svc)
		}
	}
	return out, nil
}

// lbTagSharers are the Services other than req's that lb's tags list (all
// that is known of a load balancer in ERROR, whose children are not read).
func lbTagSharers(lb *octaviaLB, req *lbRequest) []string {
	var out []string
	for _, t := range lb.LB.Tags {
		if isServiceName(t) && t != req.Name && t != lb.LB.Name {
			out = append(out, t)
		}
	}
	return out
}

// ownsListener reports whether l is the Service's: tagged with its name,
// or claimed by no Service and the Service is the primary.
func (s *lbShare) ownsListener(l *listeners.Listener) bool {
	claimed := false
	for _, t := range l.Tags {
		if s.isSelf(t) {
			return true
		}
		claimed = claimed || isServiceName(t)
	}
	return !claimed && s.primary
}

func hasUnclaimedListener(lb *octaviaLB) bool {
	return slices.ContainsFunc(lb.Listeners, func(l listeners.Listener) bool { return !slices.ContainsFunc(l.Tags, isServiceName) })
}

// ownsOrphanPool reports whether a pool no listener uses is the Service's:
// by its name (pool_<i>_<LB name of its Service>), else the primary's.
func (s *lbShare) ownsOrphanPool(p *pools.Pool) bool {
	if name := poolServiceName(p.Name); isServiceName(name) {
		return s.isSelf(name)
	}
	return s.primary
}

// poolServiceName is the Service LB name in a pool name the CCM (or OCCM)
// gave, "" for another name.
func poolServiceName(name string) string {
	rest, ok := strings.CutPrefix(name, "pool_")
	if !ok {
		return ""
	}
	i := strings.IndexByte(rest, '_')
	if i <= 0 {
		return ""
	}
	if _, err := strconv.Atoi(rest[:i]); err != nil {
		return ""
	}
	return rest[i+1:]
}

// view is lb as the Service sees it: only its listeners and pools (the
// members and monitors of other pools are never looked at). planChanges on
// the view plans only the Service's writes.
func (s *lbShare) view(lb *octaviaLB) *octaviaLB {
	v := *lb
	v.Listeners, v.Pools = nil, nil
	used, mine := map[string]bool{}, map[string]bool{}
	for i := range lb.Listeners {
		l := &lb.Listeners[i]
		used[l.DefaultPoolID] = true
		if s.ownsListener(l) {
			v.Listeners = append(v.Listeners, *l)
			mine[l.DefaultPoolID] = true
		}
	}
	for i := range lb.Pools {
		p := &lb.Pools[i]
		if mine[p.ID] || !used[p.ID] && s.ownsOrphanPool(p) {
			v.Pools = append(v.Pools, *p)
		}
	}
	return &v
}

// portInUse is an error when a port the Service asks for is already served
// by a listener of lb that is not the Service's (Octavia allows one
// listener per port, but UDP and SCTP beside TCP).
func (s *lbShare) portInUse(lb *octaviaLB, want []listenerSpec) error {
	for i := range want {
		w := &want[i]
		for j := range lb.Listeners {
			l := &lb.Listeners[j]
			if l.ProtocolPort != w.Port || transportOf(l.Protocol) != transportOf(w.Protocol) || s.ownsListener(l) {
				continue
			}
			return fmt.Errorf("port %d/%s of load balancer %s is already used by listener %s of %s; a Service sharing a load balancer needs ports of its own",
				w.Port, transportOf(w.Protocol), lb.LB.ID, l.ID, listenerUsers(l))
		}
	}
	return nil
}

// transportOf is the transport of an Octavia listener protocol.
func transportOf(protocol string) string {
	switch protocol {
	case "UDP", "SCTP":
		return protocol
	}
	return "TCP"
}

func listenerUsers(l *listeners.Listener) string {
	var names []string
	for _, t := range l.Tags {
		if isServiceName(t) {
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return "no Service (made outside the CCM, or by the Service the load balancer was created for)"
	}
	return strings.Join(names, ", ")
}

// withoutTags is tags without names, as a new slice.
func withoutTags(tags, names []string) []string {
	out := []string{}
	for _, t := range tags {
		if !slices.Contains(names, t) {
			out = append(out, t)
		}
	}
	return out
}

// setTags replaces a load balancer's tags: one Octavia write (the load
// balancer goes PENDING_UPDATE). 409 wraps framework.ErrProvisioning.
func (o *octaviaAPI) setTags(ctx context.Context, id string, tags []string) error {
	_, err := loadbalancers.Update(lbOp(ctx, "loadbalancers.update"), o.lb, id, loadbalancers.UpdateOpts{Tags: &tags}).Extract()
	if err != nil {
		return octaviaError("updating the tags of load balancer "+id, err)
	}
	return nil
}
