package openstack

import (
	"context"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// This file makes the driver a framework.LoadBalancerLister: the pipeline
// serves lookups from one shared list of the project's load balancers,
// and what the driver knows of each (lb_known.go) completes it, so that a
// sync of an unchanged load balancer costs no call of its own.

// treeLoads bounds the children reads a list makes at once.
const treeLoads = 8

var _ framework.LoadBalancerLister[LoadBalancerConfig, octaviaLB] = (*lbDriver)(nil)

// List implements framework.LoadBalancerLister: every load balancer of the
// project (Octavia's list, all pages), each with its floating IP and, when
// ACTIVE and the CCM's, its children. These come from what the driver
// knows when that is still true; else the floating IPs are listed (one
// Neutron call for all) and the children read, up to treeLoads load
// balancers at a time. A load balancer whose children cannot be read is
// listed without them (Update reads them).
func (d *lbDriver) List(ctx context.Context) ([]*octaviaLB, error) {
	since := d.known.mark()
	all, err := d.oct.listLBs(ctx, "")
	if err != nil {
		return nil, err
	}
	lbs := all[:0]
	for _, lb := range all {
		if lb.LB.ProvisioningStatus != statusDeleted {
			lbs = append(lbs, lb)
		}
	}
	if err := d.refreshFIPs(ctx, lbs, since); err != nil {
		return nil, err
	}
	var load []*octaviaLB
	for _, lb := range lbs {
		d.known.attachFIP(lb)
		// A load balancer listed as it was before a write of the driver is
		// left as it is: the pipeline keeps what the write left.
		if ok, wait := d.known.attachTreeOrWait(lb); !ok && !wait && lb.LB.ProvisioningStatus == statusActive && d.mine(lb) {
			load = append(load, lb)
		}
	}
	d.loadTrees(ctx, load)
	d.known.prune(lbs, since)
	return lbs, nil
}

// Owns implements framework.LoadBalancerLister: a Service owns the load
// balancer with OCCM's name for it, unless that is being deleted (as Find
// answers).
func (d *lbDriver) Owns(lb *octaviaLB, req *lbRequest) bool {
	return lb.LB.Name == req.Name && lb.LB.ProvisioningStatus != statusPendingDelete && lb.LB.ProvisioningStatus != statusDeleted
}

// mine reports whether lb is one the CCM serves: named for this cluster,
// or dealt with before (an adopted one).
func (d *lbDriver) mine(lb *octaviaLB) bool {
	return strings.HasPrefix(lb.LB.Name, lbNamePrefix+d.env.ClusterName+"_") || d.known.known(lb.LB.ID)
}

// refreshFIPs lists every floating IP of the project when the CCM has a
// load balancer whose floating IP the driver does not know, or knows from
// a list older than the shared list's TTL.
func (d *lbDriver) refreshFIPs(ctx context.Context, lbs []*octaviaLB, since uint64) error {
	stale, due := d.known.fipsDue(d.listTTL()), false
	for _, lb := range lbs {
		if due = hasFIPSlot(lb) && (stale || !d.known.fipKnown(lb.LB.ID)) && d.mine(lb); due {
			break
		}
	}
	if !due {
		return nil
	}
	at := time.Now()
	fips, err := d.net.listFIPs(ctx, floatingips.ListOpts{})
	if err != nil {
		return err
	}
	byPort := make(map[string]*floatingips.FloatingIP, len(fips))
	for i := range fips {
		if fips[i].PortID != "" {
			byPort[fips[i].PortID] = &fips[i]
		}
	}
	d.known.storeFIPs(lbs, byPort, since, at)
	return nil
}

// loadTrees reads the children of lbs, treeLoads at a time.
func (d *lbDriver) loadTrees(ctx context.Context, lbs []*octaviaLB) {
	var g errgroup.Group
	g.SetLimit(treeLoads)
	for _, lb := range lbs {
		g.Go(func() error {
			if err := d.loadTree(ctx, lb); err != nil {
				klog.FromContext(ctx).V(2).Info("Listing a load balancer without its children", "loadBalancerID", lb.LB.ID, "err", err)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// listTTL is how long the shared list serves lookups.
func (d *lbDriver) listTTL() time.Duration {
	if d.env.LoadBalancerCacheTTL > 0 {
		return d.env.LoadBalancerCacheTTL
	}
	return framework.DefaultLoadBalancerCacheTTL
}
