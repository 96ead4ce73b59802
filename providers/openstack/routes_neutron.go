package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// The Neutron side of routes: the router's extra routes and the next-hop
// ports' allowed address pairs.

func (r *routes) getRouter(ctx context.Context, n *routeAPI) (*routers.Router, error) {
	router, err := routers.Get(cloudapi.WithOperation(ctx, "routers.get"), n.client, r.routerID).Extract()
	if err != nil {
		return nil, fmt.Errorf("getting router %s ([Route] router-id): %w", r.routerID, cloud.ServiceError(err))
	}
	switch {
	case router == nil:
		// gophercloud extracts {} as no router and no error.
		return nil, fmt.Errorf("getting router %s ([Route] router-id): malformed response: no router", r.routerID)
	case router.ID != r.routerID:
		// {"router": {}} would read as a router without routes.
		return nil, fmt.Errorf("getting router %s ([Route] router-id): malformed response: the API answered with router %q", r.routerID, router.ID)
	case router.Routes == nil:
		// The extraroute extension sends [] for none: read as none,
		// every route would be made again.
		return nil, fmt.Errorf("getting router %s ([Route] router-id): malformed response: no routes member", r.routerID)
	}
	for _, rt := range router.Routes {
		// Read as it is, a garbled route would be a route to another
		// destination, or a blackhole, which the route controller
		// deletes.
		if _, err := netip.ParsePrefix(rt.DestinationCIDR); err != nil {
			return nil, fmt.Errorf("getting router %s: malformed response: route destination %q", r.routerID, rt.DestinationCIDR)
		}
		if _, err := netip.ParseAddr(rt.NextHop); err != nil {
			return nil, fmt.Errorf("getting router %s: malformed response: route nexthop %q", r.routerID, rt.NextHop)
		}
	}
	return router, nil
}

// addRoute adds want to the router unless it is there; it reports
// whether it wrote.
func (r *routes) addRoute(ctx context.Context, n *routeAPI, want routers.Route) (bool, error) {
	has := func(rs []routers.Route) bool {
		return slices.ContainsFunc(rs, func(rt routers.Route) bool {
			return sameRoute(rt, netip.MustParsePrefix(want.DestinationCIDR), []netip.Addr{netip.MustParseAddr(want.NextHop)})
		})
	}
	if !n.atomic {
		return r.changeRoutes(ctx, n, nil, func(cur []routers.Route) ([]routers.Route, bool) {
			if has(cur) {
				return nil, false
			}
			return append(slices.Clone(cur), want), true
		})
	}
	router, err := r.getRouter(ctx, n)
	if err != nil || has(router.Routes) {
		return false, err
	}
	add := []routers.Route{want}
	_, err = extraroutes.Add(cloudapi.WithOperation(ctx, "routers.add_extraroutes"), n.client, r.routerID, extraroutes.Opts{Routes: &add}).Extract()
	if err != nil {
		return false, fmt.Errorf("adding route to router %s: %w", r.routerID, cloud.ServiceError(err))
	}
	return true, nil
}

// removeRoutes takes gone out of the router, read as router.
func (r *routes) removeRoutes(ctx context.Context, n *routeAPI, router *routers.Router, gone []routers.Route) error {
	if n.atomic {
		_, err := extraroutes.Remove(cloudapi.WithOperation(ctx, "routers.remove_extraroutes"), n.client, r.routerID, extraroutes.Opts{Routes: &gone}).Extract()
		if err != nil {
			return fmt.Errorf("removing route from router %s: %w", r.routerID, cloud.ServiceError(err))
		}
		return nil
	}
	_, err := r.changeRoutes(ctx, n, router, func(cur []routers.Route) ([]routers.Route, bool) {
		next := slices.DeleteFunc(slices.Clone(cur), func(rt routers.Route) bool { return slices.Contains(gone, rt) })
		return next, len(next) != len(cur)
	})
	return err
}

// changeRoutes is the read-modify-write of the router's route list:
// change maps the current list to the new one (false: nothing to do), and
// the update carries the revision read (If-Match), so a concurrent change
// makes Neutron answer 412 and the whole step is redone on a fresh read.
// router, when not nil, is a recent read to start from.
func (r *routes) changeRoutes(ctx context.Context, n *routeAPI, router *routers.Router, change func([]routers.Route) ([]routers.Route, bool)) (bool, error) {
	r.rmw.Lock()
	defer r.rmw.Unlock()
	for attempt := 1; ; attempt++ {
		if router == nil {
			var err error
			if router, err = r.getRouter(ctx, n); err != nil {
				return false, err
			}
		}
		next, changed := change(router.Routes)
		if !changed {
			return false, nil
		}
		opts := routers.UpdateOpts{Routes: &next}
		if rev := router.RevisionNumber; rev > 0 {
			opts.RevisionNumber = &rev
		}
		_, err := routers.Update(cloudapi.WithOperation(ctx, "routers.update"), n.client, r.routerID, opts).Extract()
		if err == nil {
			return true, nil
		}
		if !changedMeanwhile(err) || attempt == maxRouteUpdateAttempts {
			return false, fmt.Errorf("updating the routes of router %s: %w", r.routerID, cloud.ServiceError(err))
		}
		klog.FromContext(ctx).V(2).Info("Router changed meanwhile; retrying", "routerID", r.routerID, "attempt", attempt)
		router = nil
	}
}

// removePairsAt removes dest from the allowed address pairs of the ports
// holding the address hop.
func (r *routes) removePairsAt(ctx context.Context, n *routeAPI, hop string, dest netip.Prefix) error {
	list, err := listRoutePorts(ctx, n, ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{IPAddress: hop}}})
	if err != nil {
		return err
	}
	for i := range list {
		if err := r.changePairs(ctx, n, &list[i], dest, false); err != nil {
			return err
		}
	}
	return nil
}

// changePairs adds dest to (or removes it from) p's allowed address
// pairs, with the same If-Match retry as changeRoutes. A port without
// port security takes no pairs (Neutron refuses them) and needs none.
func (r *routes) changePairs(ctx context.Context, n *routeAPI, p *routePort, dest netip.Prefix, add bool) error {
	for attempt := 1; ; attempt++ {
		if p.PortSecurityEnabled != nil && !*p.PortSecurityEnabled {
			klog.FromContext(ctx).V(2).Info("Port security is off; allowed address pairs left alone", "portID", p.ID)
			return nil
		}
		isDest := func(ap ports.AddressPair) bool {
			q, err := netip.ParsePrefix(ap.IPAddress)
			if err != nil {
				ip, ipErr := netip.ParseAddr(ap.IPAddress)
				q, err = netip.PrefixFrom(ip, ip.BitLen()), ipErr
			}
			return err == nil && q.Masked() == dest
		}
		has := slices.ContainsFunc(p.AllowedAddressPairs, isDest)
		if has == add {
			return nil
		}
		pairs := slices.DeleteFunc(slices.Clone(p.AllowedAddressPairs), isDest)
		if add {
			pairs = append(pairs, ports.AddressPair{IPAddress: dest.String()})
		}
		opts := ports.UpdateOpts{AllowedAddressPairs: &pairs}
		if rev := p.RevisionNumber; rev > 0 {
			opts.RevisionNumber = &rev
		}
		err := ports.Update(cloudapi.WithOperation(ctx, "ports.update"), n.client, p.ID, opts).Err
		switch {
		case err == nil:
			return nil
		case !add && cloud.IsAPINotFound(err):
			return nil // the port went, and its pairs with it
		case !changedMeanwhile(err) || attempt == maxRouteUpdateAttempts:
			return fmt.Errorf("updating the allowed address pairs of port %s: %w", p.ID, cloud.ServiceError(err))
		}
		klog.FromContext(ctx).V(2).Info("Port changed meanwhile; retrying", "portID", p.ID, "attempt", attempt)
		var fresh routePort
		err = ports.Get(cloudapi.WithOperation(ctx, "ports.get"), n.client, p.ID).ExtractInto(&fresh)
		if err != nil {
			if !add && cloud.IsAPINotFound(err) {
				return nil
			}
			return fmt.Errorf("getting port %s: %w", p.ID, cloud.ServiceError(err))
		}
		p = &fresh
	}
}

func listRoutePorts(ctx context.Context, n *routeAPI, opts ports.ListOpts) ([]routePort, error) {
	var all []routePort
	err := ports.List(n.client, opts).EachPage(cloudapi.WithOperation(ctx, "ports.list"), func(_ context.Context, page pagination.Page) (bool, error) {
		var list []routePort
		if err := ports.ExtractPortsInto(page, &list); err != nil {
			return false, err
		}
		all = append(all, list...)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing ports: %w", cloud.ServiceError(err))
	}
	return all, nil
}

// changedMeanwhile reports whether Neutron refused an update because the
// resource changed: 412 on an If-Match revision, or 409.
func changedMeanwhile(err error) bool {
	var a *cloud.APIError
	if errors.As(err, &a) {
		return a.Status == http.StatusPreconditionFailed || a.Status == http.StatusConflict
	}
	return gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed) || gophercloud.ResponseCodeIs(err, http.StatusConflict)
}
