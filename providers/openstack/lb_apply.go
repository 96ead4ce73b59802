package openstack

import (
	"context"
	"fmt"
	"maps"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file is the write side of the driver: Create, Update (floating
// IP, node security group, then one Octavia write per sync), the ERROR
// recovery, and Delete.

// Create sends the whole tree in one POST (Octavia's fully populated
// create), or the load balancer alone with [LoadBalancer]
// provider-requires-serial-api-calls. It answers PENDING_CREATE; the
// pipeline requeues until ACTIVE, and Update then adds the floating IP. A
// lost answer is recovered by Find (by name) on the next sync.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*octaviaLB, error) {
	cfg, err := d.settings(req)
	if err != nil {
		return nil, err
	}
	svc := req.Service
	nodes, err := d.memberNodes(ctx, req, cfg)
	if err != nil {
		return nil, err
	}
	opts := loadbalancers.CreateOpts{
		Name: req.Name, Description: fmt.Sprintf("Kubernetes external service %s/%s from cluster %s", svc.Namespace, svc.Name, req.ClusterName),
		Provider: d.cfg.LBProvider, VipPortID: cfg.PortID,
	}
	if opts.VipPortID == "" {
		opts.VipSubnetID, opts.VipNetworkID = cfg.SubnetID, cfg.NetworkID
		if opts.VipSubnetID == "" && opts.VipNetworkID == "" {
			if opts.VipSubnetID, err = d.nodeSubnet(ctx, nodes, preferIPv6(svc)); err != nil {
				return nil, err
			}
		}
		if d.internal(cfg) || preferIPv6(svc) {
			opts.VipAddress = svc.Spec.LoadBalancerIP
		}
	}
	if d.features.tags {
		opts.Tags = []string{req.Name}
	}
	if d.features.flavors {
		opts.FlavorID = cfg.FlavorID
	}
	if d.features.availabilityZones {
		opts.AvailabilityZone = cfg.AvailabilityZone
	}
	var want []listenerSpec
	if !d.cfg.ProviderRequiresSerialAPICalls {
		want, err = desiredListeners(svc, treeInput{
			cfg: cfg, lbName: req.Name, features: d.features, ipv6: preferIPv6(svc), nodes: nodes,
			memberSubnetID: cloud.FirstOf(cfg.MemberSubnetID, opts.VipSubnetID), createMonitor: d.cfg.CreateMonitor,
		})
		if err != nil {
			return nil, err
		}
		for i := range want {
			opts.Listeners = append(opts.Listeners, listenerCreateOpts(&want[i], true))
		}
	}
	lb, answer, err := d.oct.create(ctx, opts)
	if err != nil {
		return nil, err
	}
	// The tree is known from the answer, and a VIP port Octavia made just
	// now has no floating IP: the syncs that follow read neither.
	d.known.created(lb, createdTree(answer, want), cfg.PortID == "")
	return lb, nil
}

// Update brings an ACTIVE load balancer in line with the Service: its
// floating IP and, with [LoadBalancer] manage-security-groups, the node
// security group (Neutron, which leaves the load balancer ACTIVE), then at
// most one Octavia write, the first of planChanges. Octavia makes the load
// balancer PENDING_UPDATE after each write and refuses the next one (409)
// until it is ACTIVE again, so Update does not wait: it leaves lb
// PENDING_UPDATE, the pipeline requeues, and the next sync reads the
// result and makes the next write. A load balancer in ERROR is recreated.
//
// What the shared list does not know of lb (its children, its floating
// IP) is read first. A member update, the write a node joining or leaving
// asks for, leaves members the driver knows, so the sync after it reads
// nothing when Octavia has applied it; any other write makes the next
// sync read the children again, and a failed one forgets the load
// balancer. A load balancer other Services use too is updateShared's.
func (d *lbDriver) Update(ctx context.Context, lb *octaviaLB, req *lbRequest) (changed bool, err error) {
	cfg, err := d.settings(req)
	if err != nil {
		return false, err
	}
	own := d.ownership(lb, req)
	switch {
	case lb.LB.ProvisioningStatus == statusError:
		return d.recover(ctx, lb, req, own)
	case isPending(lb.LB.ProvisioningStatus):
		return false, framework.Provisioning("load balancer %s is %s", lb.LB.ID, lb.LB.ProvisioningStatus)
	}
	defer func() {
		if err != nil {
			// What the driver knew may be what made the call fail (a 409:
			// the load balancer was not ACTIVE); the next sync reads.
			d.known.forget(lb.LB.ID)
		}
	}()
	if err := d.complete(ctx, lb); err != nil {
		return false, err
	}
	if handled, changed, err := d.updateIfShared(ctx, lb, req, cfg, own); handled {
		return changed, err // lb_shared_apply.go
	}
	if changed, err = d.reconcileFIP(ctx, lb, cfg, req, own); err != nil {
		return changed, err
	}
	nodes, err := d.memberNodes(ctx, req, cfg)
	if err != nil {
		return changed, err
	}
	ipv6, memberSubnetID := isIPv6Addr(lb.LB.VipAddress), cloud.FirstOf(cfg.MemberSubnetID, lb.LB.VipSubnetID)
	if d.sg != nil {
		// Before the members: a new node's port is open when it joins.
		sgChanged, err := d.sg.ensure(ctx, sgTarget{
			svc: req.Service, clusterName: req.ClusterName, members: sgMembers(nodes, ipv6), subnetID: memberSubnetID,
		})
		changed = changed || sgChanged
		if err != nil {
			return changed, fmt.Errorf("node security group: %w", err)
		}
	}
	want, err := desiredListeners(req.Service, treeInput{
		cfg: cfg, lbName: req.Name, features: d.features, ipv6: ipv6, nodes: nodes,
		memberSubnetID: memberSubnetID, createMonitor: d.cfg.CreateMonitor,
	})
	if err != nil {
		return changed, err
	}
	plan := planChanges(lb, want, d.features, d.cfg.ProviderRequiresSerialAPICalls)
	if len(plan) == 0 {
		return changed, nil
	}
	klog.FromContext(ctx).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID,
		"change", plan[0].String(), "remaining", len(plan)-1)
	klog.FromContext(ctx).V(4).Info("Load balancer plan", "loadBalancerID", lb.LB.ID, "plan", describePlan(plan))
	if err := d.oct.apply(ctx, lb.LB.ID, plan[0]); err != nil {
		return changed, err
	}
	d.applied(lb, plan[0])
	return true, nil
}

// applied records a write Octavia accepted: lb is PENDING_UPDATE, with
// the members a batch update leaves, or with its children unknown.
func (d *lbDriver) applied(lb *octaviaLB, a action) {
	if a.kind == actBatchMembers {
		members := maps.Clone(lb.Members)
		if members == nil {
			members = map[string]poolMembers{}
		}
		members[a.poolID] = desiredPoolMembers(a.want.Pool.Members)
		lb.Members = members
		d.known.wrote(lb, true)
	} else {
		d.known.wrote(lb, false)
		lb.loaded, lb.Listeners, lb.Pools, lb.Members, lb.Monitors = false, nil, nil, nil, nil
	}
	lb.LB.ProvisioningStatus = statusPendingUpdate
}

// recover replaces a load balancer in ERROR, which Octavia only lets one
// delete: its floating IP is detached (kept), the load balancer deleted
// with its children, and the next syncs create it again and re-attach the
// floating IP (found by its description). Octavia's failover would keep
// the VIP, but it is admin-only under the default policy and not offered
// by every provider. A load balancer the CCM did not create is left alone.
func (d *lbDriver) recover(ctx context.Context, lb *octaviaLB, req *lbRequest, own lbOwnership) (bool, error) {
	if own != lbOwned {
		return false, fmt.Errorf("load balancer %s is in ERROR; it is not the CCM's (name %q), so it is not recreated: repair or delete it in Octavia", lb.LB.ID, lb.LB.Name)
	}
	if others := lbTagSharers(lb, req); len(others) > 0 {
		return false, fmt.Errorf("load balancer %s is in ERROR and shared with %v, whose listeners a new one would not have, so it is not recreated: repair or delete it in Octavia", lb.LB.ID, others)
	}
	if !lb.fipLoaded {
		if err := d.loadFIP(ctx, lb); err != nil {
			return false, err
		}
	}
	klog.FromContext(ctx).Info("Recreating load balancer in ERROR", "service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID)
	d.event(req.Service, corev1.EventTypeWarning, eventRecreating, "Load balancer %s is in ERROR: deleting it to create it again (the floating IP is kept)", lb.LB.ID)
	if lb.FIP != nil {
		if err := d.net.disassociate(ctx, lb.FIP); err != nil {
			return false, err
		}
		lb.FIP = nil
	}
	err := d.oct.deleteLB(ctx, lb.LB.ID, true)
	d.known.forget(lb.LB.ID)
	if err != nil && !framework.IsNotFound(err) {
		return true, err
	}
	lb.LB.ProvisioningStatus = statusPendingDelete
	return true, nil
}

// reconcileFIP gives an external load balancer its floating IP, and takes
// it from one that became internal (released when releasable, else
// detached).
func (d *lbDriver) reconcileFIP(ctx context.Context, lb *octaviaLB, cfg *LoadBalancerConfig, req *lbRequest, own lbOwnership) (bool, error) {
	if !lb.fipLoaded || lb.LB.VipPortID == "" || isIPv6Addr(lb.LB.VipAddress) {
		return false, nil
	}
	svc := req.Service
	if d.internal(cfg) {
		if lb.FIP == nil || own != lbOwned {
			return false, nil
		}
		var err error
		if d.releasable(lb.FIP, req, cfg) {
			err = d.net.release(ctx, lb.FIP)
		} else {
			err = d.net.disassociate(ctx, lb.FIP)
		}
		if err != nil {
			return false, err
		}
		lb.FIP = nil
		d.known.setFIP(lb.LB.ID, nil)
		return true, nil
	}
	if lb.FIP != nil {
		return false, nil
	}
	fip, err := d.net.ensure(ctx, fipRequest{
		portID: lb.LB.VipPortID, address: svc.Spec.LoadBalancerIP, networkID: cfg.FloatingNetworkID,
		subnetID: cfg.FloatingSubnetID, subnetName: cfg.FloatingSubnet, subnetTags: cfg.FloatingSubnetTags,
		description: fipDescription(req.ClusterName, svc),
	})
	if err != nil {
		return false, err
	}
	if fip == nil {
		d.event(svc, corev1.EventTypeWarning, eventNoFloatingNet, "No external network for a floating IP: the load balancer is internal (set [LoadBalancer] floating-network-id or the %s annotation)", annotationKey("floating-network-id"))
		return false, nil
	}
	lb.FIP = fip
	d.known.setFIP(lb.LB.ID, fip)
	return true, nil
}

// Delete removes the load balancer the CCM created (with cascade unless
// [LoadBalancer] cascade-delete is false) after removing the Service's
// node security group and releasing the floating IP it made (see
// releasable). Of an adopted load balancer it removes only
// the listeners and pools; of one other Services use too, only the
// Service's own (deleteShared). It does not wait:
// while Octavia works it returns ErrProvisioning and the pipeline asks
// again; a load balancer found gone is ErrNotFound, which is success.
func (d *lbDriver) Delete(ctx context.Context, lb *octaviaLB, req *lbRequest) error {
	if d.sg != nil {
		// The Service's own, whatever becomes of the load balancer.
		if err := d.sg.remove(ctx, req.Service); err != nil {
			return fmt.Errorf("node security group: %w", err)
		}
	}
	id, status := lb.LB.ID, lb.LB.ProvisioningStatus
	switch {
	case status == statusPendingDelete:
		if _, err := d.oct.getLB(ctx, id); err != nil {
			return err // gone: ErrNotFound
		}
		return framework.Provisioning("load balancer %s is being deleted", id)
	case isPending(status):
		return framework.Provisioning("load balancer %s is %s", id, status)
	}
	log := klog.FromContext(ctx).WithValues("service", klog.KObj(req.Service), "loadBalancerID", id)
	own := d.ownership(lb, req)
	if done, err := d.deleteShared(ctx, lb, req, &own); done {
		return err // lb_shared_apply.go: the Service left a load balancer others use
	}
	defer d.known.forget(id)
	if err := d.complete(ctx, lb); err != nil {
		return err
	}
	// A floating IP the CCM did not make stays; Neutron detaches it when
	// the VIP port goes. One it made is also looked for by its
	// description when the port showed none.
	if lb.FIP == nil && hasFIPSlot(lb) && !req.Config.KeepFloatingIP && req.Service.Spec.LoadBalancerIP == "" {
		fip, err := d.net.ownFIP(ctx, fipDescription(req.ClusterName, req.Service), lb.LB.VipPortID)
		if err != nil {
			return err
		}
		lb.FIP = fip
	}
	if lb.FIP != nil && d.releasable(lb.FIP, req, req.Config) {
		if err := d.net.release(ctx, lb.FIP); err != nil {
			return err
		}
		lb.FIP = nil
	}
	if own == lbAdopted {
		return d.deleteChildren(ctx, lb)
	}
	cascade := d.cfg.CascadeDelete || !lb.loaded
	if !cascade && (len(lb.Listeners) > 0 || len(lb.Pools) > 0) {
		return d.deleteChildren(ctx, lb)
	}
	if err := d.oct.deleteLB(ctx, id, cascade); err != nil {
		return err
	}
	log.Info("Deleting load balancer", "cascade", cascade)
	return framework.Provisioning("load balancer %s is being deleted", id)
}

// deleteChildren deletes one pool, else one listener, of lb per call;
// nil once none is left.
func (d *lbDriver) deleteChildren(ctx context.Context, lb *octaviaLB) error {
	if lb.LB.ProvisioningStatus != statusActive || !lb.loaded {
		return fmt.Errorf("load balancer %s is %s; its listeners cannot be removed", lb.LB.ID, lb.LB.ProvisioningStatus)
	}
	var a action
	switch {
	case len(lb.Pools) > 0:
		a = action{kind: actDeletePool, poolID: lb.Pools[0].ID}
	case len(lb.Listeners) > 0:
		a = action{kind: actDeleteListener, listenerID: lb.Listeners[0].ID}
	default:
		return nil
	}
	if err := d.oct.apply(ctx, lb.LB.ID, a); err != nil {
		return err
	}
	return framework.Provisioning("load balancer %s: %s", lb.LB.ID, a)
}
