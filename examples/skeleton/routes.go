package skeleton

import (
	"context"
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// routes implements cloudprovider.Routes over /v1/routes, for clusters
// whose pod network relies on the cloud's routing (--configure-cloud-routes).
// The upstream route controller decides what to create and delete; this
// only has to report routes faithfully and make Create and Delete
// idempotent.
type routes struct {
	client    *client
	instances *instances
}

var _ cloudprovider.Routes = (*routes)(nil)

// clusterTag marks the routes this cluster owns; other routes in the
// account are never listed, so never deleted.
func clusterTag(clusterName string) string { return "ccmkit:" + clusterName }

// ListRoutes returns the cluster's routes, each pointing at the Node named
// like its target instance. A route whose instance is gone is a Blackhole,
// which the route controller deletes: so a malformed instance list is an
// error, not a reason to call a route a blackhole.
func (r *routes) ListRoutes(ctx context.Context, clusterName string) ([]*cloudprovider.Route, error) {
	rts, err := r.list(ctx, clusterName)
	if err != nil {
		return nil, err
	}
	insts, err := r.client.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(insts))
	for _, inst := range insts {
		// With a malformed instance in the list, a route to it would
		// read as a blackhole, which the route controller deletes.
		if err := inst.check(); err != nil {
			return nil, fmt.Errorf("listing routes: %w", err)
		}
		// Nor can a route point at a Node without its instance's name.
		if inst.Name == "" {
			return nil, fmt.Errorf("listing routes: malformed response: instance %s has no name", inst.ID)
		}
		names[inst.ID] = inst.Name
	}
	out := make([]*cloudprovider.Route, 0, len(rts))
	for _, rt := range rts {
		route := &cloudprovider.Route{Name: rt.ID, DestinationCIDR: rt.DestinationCIDR}
		if name, ok := names[rt.TargetInstanceID]; ok {
			route.TargetNode = types.NodeName(name)
		} else {
			route.Blackhole = true
		}
		out = append(out, route)
	}
	return out, nil
}

// CreateRoute sends route.DestinationCIDR to the instance of
// route.TargetNode. A route that already does so is success.
func (r *routes) CreateRoute(ctx context.Context, clusterName, _ string, route *cloudprovider.Route) error {
	inst, err := r.instances.InstanceByName(ctx, string(route.TargetNode))
	if err != nil {
		return fmt.Errorf("route %s to node %s: %w", route.DestinationCIDR, route.TargetNode, err)
	}
	existing, err := r.list(ctx, clusterName)
	if err != nil {
		return err
	}
	for _, rt := range existing {
		if sameCIDR(rt.DestinationCIDR, route.DestinationCIDR) && rt.TargetInstanceID == inst.ID {
			return nil
		}
	}
	created, err := r.client.createRoute(ctx, &routeSpec{DestinationCIDR: route.DestinationCIDR, TargetInstanceID: inst.ID, Tags: []string{clusterTag(clusterName)}})
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Created route", "routeID", created.ID, "destination", created.DestinationCIDR, "node", route.TargetNode)
	return nil
}

// DeleteRoute deletes the cluster's route with route's ID (its Name, as
// ListRoutes set it) or destination. A route that is already gone is
// success.
func (r *routes) DeleteRoute(ctx context.Context, clusterName string, route *cloudprovider.Route) error {
	existing, err := r.list(ctx, clusterName)
	if err != nil {
		return err
	}
	for _, rt := range existing {
		if rt.ID != route.Name && !sameCIDR(rt.DestinationCIDR, route.DestinationCIDR) {
			continue
		}
		if err := r.client.deleteRoute(ctx, rt.ID); err != nil && !framework.IsNotFound(err) {
			return err
		}
		klog.FromContext(ctx).Info("Deleted route", "routeID", rt.ID, "destination", rt.DestinationCIDR)
	}
	return nil
}

// list returns the cluster's routes, all of them well-formed: a route
// read in part would be taken for a blackhole, or for a route elsewhere.
func (r *routes) list(ctx context.Context, clusterName string) ([]route, error) {
	rts, err := r.client.listRoutes(ctx, clusterTag(clusterName))
	if err != nil {
		return nil, err
	}
	for i := range rts {
		if err := rts[i].check(); err != nil {
			return nil, fmt.Errorf("listing routes: %w", err)
		}
	}
	return rts, nil
}

// sameCIDR compares CIDRs by value, so an IPv6 prefix matches however
// either side spells it ("fd00:0::/64" is "fd00::/64").
func sameCIDR(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return pa.Masked() == pb.Masked()
}
