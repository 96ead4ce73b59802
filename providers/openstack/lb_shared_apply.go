package openstack

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file is the write side of shared load balancers (see lb_shared.go):
// joining one, keeping the Service's own listeners in line with it, and
// leaving it. The rules of the driver hold: at most one Octavia write per
// sync, no write when the Service is refused, and nothing of another
// Service's is touched.

// Event reasons of shared load balancers.
const (
	eventSharedLimit   = "SharedLoadBalancerFull"
	eventSharedPort    = "SharedLoadBalancerPortInUse"
	eventSharedAddress = "SharedLoadBalancerAddress"
	eventSharedTags    = "SharedLoadBalancerUnsupported"
)

// fipDescriptionPrefix starts fipDescription: a floating IP the CCM (or
// OCCM) made for a Service.
const fipDescriptionPrefix = "Floating IP for Kubernetes external service "

// updateShared is Update for a Service sharing its load balancer: it may
// join (max-shared-lb, free ports, an address it can share: otherwise a
// Warning Event and no write), then, one write per sync, tags the load
// balancer with the Service and brings the Service's own listeners in line.
// Only the primary Service manages the floating IP.
func (d *lbDriver) updateShared(ctx context.Context, lb *octaviaLB, req *lbRequest, cfg *LoadBalancerConfig, own lbOwnership, s *lbShare) (bool, error) {
	svc := req.Service
	if s.newcomer && s.users+1 > d.cfg.MaxSharedLB {
		return false, d.refuse(svc, eventSharedLimit, "load balancer %s is already shared by %d Services (%s), and [LoadBalancer] max-shared-lb is %d",
			lb.LB.ID, s.users, strings.Join(s.others, ", "), d.cfg.MaxSharedLB)
	}
	if !s.primary {
		if err := d.sharedAddress(lb, svc, cfg); err != nil {
			return false, err
		}
	}
	nodes, err := d.memberNodes(ctx, req, cfg)
	if err != nil {
		return false, err
	}
	ipv6, memberSubnetID := isIPv6Addr(lb.LB.VipAddress), cloud.FirstOf(cfg.MemberSubnetID, lb.LB.VipSubnetID)
	want, err := desiredListeners(svc, treeInput{
		cfg: cfg, lbName: req.Name, features: d.features, ipv6: ipv6, nodes: nodes,
		memberSubnetID: memberSubnetID, createMonitor: d.cfg.CreateMonitor,
	})
	if err != nil {
		return false, err
	}
	if err := s.portInUse(lb, want); err != nil {
		return false, d.refuse(svc, eventSharedPort, "%v", err)
	}
	changed := false
	if s.primary {
		if changed, err = d.reconcileFIP(ctx, lb, cfg, req, own); err != nil {
			return changed, err
		}
	}
	if d.sg != nil {
		sgChanged, err := d.sg.ensure(ctx, sgTarget{
			svc: svc, clusterName: req.ClusterName, members: sgMembers(nodes, ipv6), subnetID: memberSubnetID,
		})
		changed = changed || sgChanged
		if err != nil {
			return changed, fmt.Errorf("node security group: %w", err)
		}
	}
	log := klog.FromContext(ctx).WithValues("service", klog.KObj(svc), "loadBalancerID", lb.LB.ID)
	if !s.tagged {
		// First: it counts the Service against max-shared-lb before its
		// listeners come.
		tags := append(slices.Clone(lb.LB.Tags), req.Name)
		if err := d.oct.setTags(ctx, lb.LB.ID, tags); err != nil {
			return changed, err
		}
		log.Info("Joining shared load balancer", "sharedWith", s.others)
		lb.LB.Tags, lb.LB.ProvisioningStatus = tags, statusPendingUpdate
		d.known.wrote(lb, false)
		return true, nil
	}
	plan := planChanges(s.view(lb), want, d.features, d.cfg.ProviderRequiresSerialAPICalls)
	if len(plan) == 0 {
		return changed, nil
	}
	log.Info("Updating shared load balancer", "change", plan[0].String(), "remaining", len(plan)-1, "sharedWith", s.others)
	log.V(4).Info("Load balancer plan", "plan", describePlan(plan))
	if err := d.oct.apply(ctx, lb.LB.ID, plan[0]); err != nil {
		return changed, err
	}
	d.applied(lb, plan[0])
	return true, nil
}

// sharedAddress checks that a Service other than the primary can use the
// load balancer's address: the floating IP is the primary's to add or
// remove, so an external Service needs one there already, and an internal
// one must not be exposed by one (as OCCM refuses).
func (d *lbDriver) sharedAddress(lb *octaviaLB, svc *corev1.Service, cfg *LoadBalancerConfig) error {
	if !lb.fipLoaded || lb.LB.VipPortID == "" || isIPv6Addr(lb.LB.VipAddress) {
		return nil
	}
	switch internal := d.internal(cfg); {
	case internal && lb.FIP != nil:
		return d.refuse(svc, eventSharedAddress, "the Service is internal, but load balancer %s, which it would share, has the floating IP %s",
			lb.LB.ID, lb.FIP.FloatingIP)
	case !internal && lb.FIP == nil:
		return d.refuse(svc, eventSharedAddress, "load balancer %s has no floating IP, and only the Service it was created for (or that adopted it first) gives it one; "+
			"set %s to share its private address", lb.LB.ID, AnnotationInternal)
	}
	return nil
}

// refuse reports why the Service cannot share the load balancer: a Warning
// Event and the error.
func (d *lbDriver) refuse(svc *corev1.Service, reason, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	d.event(svc, corev1.EventTypeWarning, reason, "%v", err)
	return err
}

// refuseUntagged: without tags (Octavia API older than 2.5) a load
// balancer cannot record who shares it, so only its primary Service may use
// it, as before sharing existed (OCCM refuses sharing there too).
func (d *lbDriver) refuseUntagged(lb *octaviaLB, req *lbRequest) error {
	return d.refuse(req.Service, eventSharedTags, "load balancer %s (%s) is used by another Service; sharing load balancers needs Octavia API 2.5 (tags): remove the %s annotation",
		lb.LB.ID, lb.LB.Name, AnnotationLoadBalancerID)
}

// deleteShared handles EnsureLoadBalancerDeleted for a Service sharing its
// load balancer. While other Services use it, the Service leaves it: its
// pools and listeners go, one per call, then its tag; the load balancer and
// its floating IP stay. When the Service is the last one on a load balancer
// the CCM made for a Service of this cluster, deleteShared releases the
// floating IP the CCM made, sets *own to lbOwned and returns false: Delete
// then deletes the load balancer as its own. done: Delete has nothing more
// to do (nil error: the Service is off the load balancer).
func (d *lbDriver) deleteShared(ctx context.Context, lb *octaviaLB, req *lbRequest, own *lbOwnership) (done bool, err error) {
	s, err := d.sharing(ctx, lb, req, *own)
	switch {
	case err != nil:
		return true, err
	case s == nil && *own == lbAdopted:
		return d.leaveAdopted(ctx, lb, req)
	case s == nil:
		return false, nil
	case !d.features.tags:
		if s.primary {
			return false, nil
		}
		klog.FromContext(ctx).Info("Not deleting another Service's load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID, "name", lb.LB.Name)
		return true, nil
	}
	log := klog.FromContext(ctx).WithValues("service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID)
	if len(s.others) == 0 && strings.HasPrefix(lb.LB.Name, lbNamePrefix+req.ClusterName+"_") {
		// Made for another Service of this cluster, which left it: the
		// last Service deletes it, with the floating IP made for it.
		if lb.FIP != nil && d.releasableShared(lb.FIP, req) {
			if err := d.net.release(ctx, lb.FIP); err != nil {
				return true, err
			}
			lb.FIP = nil
		}
		log.Info("Last Service of a shared load balancer: deleting it", "name", lb.LB.Name)
		*own = lbOwned
		return false, nil
	}
	if lb.LB.ProvisioningStatus != statusActive || !lb.loaded {
		return true, fmt.Errorf("load balancer %s is %s and shared with %s: the Service's listeners cannot be removed; repair it in Octavia",
			lb.LB.ID, lb.LB.ProvisioningStatus, strings.Join(s.others, ", "))
	}
	err = d.deleteChildren(ctx, s.view(lb))
	d.known.forget(lb.LB.ID)
	if err != nil {
		return true, err
	}
	if s.tagged {
		if err := d.oct.setTags(ctx, lb.LB.ID, withoutTags(lb.LB.Tags, s.selfNames)); err != nil {
			return true, err
		}
		return true, framework.Provisioning("load balancer %s: removing the Service from its tags", lb.LB.ID)
	}
	log.Info("Left shared load balancer; it stays for the other Services", "sharedWith", s.others)
	return true, nil
}

// leaveAdopted handles the delete of the last Service of a load balancer
// made outside the CCM: as for one it adopted alone, the listeners and
// pools go and the load balancer stays. The floating IP the CCM made goes
// too, even one made for a Service that shared the load balancer before.
// When the Service tagged the load balancer (it shared it), leaveAdopted
// removes the children itself, then the tag, so that the next Service to
// adopt the load balancer does not take it for shared; otherwise Delete
// goes on as before (done false).
func (d *lbDriver) leaveAdopted(ctx context.Context, lb *octaviaLB, req *lbRequest) (done bool, err error) {
	if lb.FIP != nil && !d.releasable(lb.FIP, req, req.Config) && d.releasableShared(lb.FIP, req) {
		if err := d.net.release(ctx, lb.FIP); err != nil {
			return true, err
		}
		lb.FIP = nil
	}
	if !slices.Contains(lb.LB.Tags, req.Name) {
		return false, nil
	}
	if lb.FIP != nil && d.releasable(lb.FIP, req, req.Config) {
		if err := d.net.release(ctx, lb.FIP); err != nil {
			return true, err
		}
		lb.FIP = nil
	}
	if err := d.deleteChildren(ctx, lb); err != nil {
		return true, err
	}
	if err := d.oct.setTags(ctx, lb.LB.ID, withoutTags(lb.LB.Tags, []string{req.Name})); err != nil {
		return true, err
	}
	return true, framework.Provisioning("load balancer %s: removing the Service from its tags", lb.LB.ID)
}

// releasableShared reports whether the last Service of a load balancer made
// for another Service of this cluster releases its floating IP: one the CCM
// made (for any Service of this cluster), unless this Service keeps its
// address (keep-floatingip, spec.loadBalancerIP).
func (d *lbDriver) releasableShared(fip *floatingips.FloatingIP, req *lbRequest) bool {
	return strings.HasPrefix(fip.Description, fipDescriptionPrefix) && strings.HasSuffix(fip.Description, " from cluster "+req.ClusterName) &&
		!req.Config.KeepFloatingIP && req.Service.Spec.LoadBalancerIP == ""
}

// updateIfShared runs updateShared when the Service shares lb (loaded);
// handled is false when lb is the Service's alone, for Update to go on.
func (d *lbDriver) updateIfShared(ctx context.Context, lb *octaviaLB, req *lbRequest, cfg *LoadBalancerConfig, own lbOwnership) (handled, changed bool, err error) {
	s, err := d.sharing(ctx, lb, req, own)
	switch {
	case err != nil:
		return true, false, err
	case s == nil:
		return false, false, nil
	case d.features.tags:
		changed, err = d.updateShared(ctx, lb, req, cfg, own, s)
		return true, changed, err
	case s.primary:
		return false, false, nil
	}
	return true, false, d.refuseUntagged(lb, req)
}
