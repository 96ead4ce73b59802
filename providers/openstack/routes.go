package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

var _ framework.RoutesProvider = (*Provider)(nil)

// maxRouteUpdateAttempts bounds the read-modify-write retries of one router or
// port update that Neutron refuses because the resource changed meanwhile
// (412 on If-Match, or 409).
const maxRouteUpdateAttempts = 5

// routeNameVia separates a route's destination and next hop in the Name
// ListRoutes gives it, so DeleteRoute removes exactly that route.
const routeNameVia = " via "

// Routes implements framework.RoutesProvider: pod-network routes as extra
// routes of the Neutron router [Route] router-id, as OCCM does. Without a
// router-id, routes are off (nil). The Neutron client and its extensions
// are looked up on first use, so start-up makes no network call for it.
func (p *Provider) Routes() cloudprovider.Routes {
	if p.cfg.Route.RouterID == "" || p.provider == nil || p.instances == nil {
		return nil
	}
	availability, _ := endpointAvailability(p.cfg.Global.EndpointType) // checked by Validate
	return &routes{
		provider:  p.provider,
		endpoint:  gophercloud.EndpointOpts{Region: p.cfg.Global.Region, Availability: availability},
		routerID:  p.cfg.Route.RouterID,
		instances: p.instances,
	}
}

// routes implements cloudprovider.Routes over a Neutron router's extra
// routes. A route sends a node's pod CIDR to the node's address on one of
// the router's subnets, and the node's port gets the pod CIDR as an
// allowed address pair, so that port security lets the pods' traffic
// through. Changes use the extraroute-atomic calls when Neutron has them,
// else a read-modify-write of the route list guarded by If-Match.
type routes struct {
	provider  *gophercloud.ProviderClient
	endpoint  gophercloud.EndpointOpts
	routerID  string
	instances *instances

	mu  sync.Mutex // guards api
	api *routeAPI

	// rmw serialises this process's read-modify-write route list updates,
	// which would otherwise only conflict with each other.
	rmw sync.Mutex
}

var _ cloudprovider.Routes = (*routes)(nil)

// routeAPI is the network client and the extensions it was found with.
type routeAPI struct {
	client *gophercloud.ServiceClient
	atomic bool // extraroute-atomic: add_extraroutes / remove_extraroutes
	pairs  bool // allowed-address-pairs
}

// routePort is the part of a Neutron port routes need.
type routePort struct {
	ID                  string              `json:"id"`
	DeviceID            string              `json:"device_id"`
	DeviceOwner         string              `json:"device_owner"`
	FixedIPs            []ports.IP          `json:"fixed_ips"`
	AllowedAddressPairs []ports.AddressPair `json:"allowed_address_pairs"`
	PortSecurityEnabled *bool               `json:"port_security_enabled"`
	RevisionNumber      int                 `json:"revision_number"`
}

// network returns the Neutron client, building it and reading Neutron's
// extensions on first use. A failure is returned and retried next time.
func (r *routes) network(ctx context.Context) (*routeAPI, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.api != nil {
		return r.api, nil
	}
	client, err := openstack.NewNetworkV2(r.provider, r.endpoint)
	if err != nil {
		return nil, fmt.Errorf("[Route] router-id is set, but there is no usable network (Neutron) endpoint for region %q in the Keystone catalog: %w",
			r.endpoint.Region, err)
	}
	exts := map[string]bool{}
	err = extensions.List(client).EachPage(cloudapi.WithOperation(ctx, "extensions.list"), func(_ context.Context, page pagination.Page) (bool, error) {
		list, err := extensions.ExtractExtensions(page)
		for _, e := range list {
			exts[e.Alias] = true
		}
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing Neutron extensions: %w", serviceError(err))
	}
	if !exts["extraroute"] && !exts["extraroute-atomic"] {
		return nil, fmt.Errorf("[Route] router-id is set, but Neutron at %s has neither the extraroute nor the extraroute-atomic extension",
			redactedURL(client.Endpoint))
	}
	r.api = &routeAPI{client: client, atomic: exts["extraroute-atomic"], pairs: exts["allowed-address-pairs"]}
	klog.FromContext(ctx).Info("Neutron routes enabled", "routerID", r.routerID,
		"atomicRoutes", r.api.atomic, "allowedAddressPairs", r.api.pairs)
	return r.api, nil
}

// ListRoutes returns every extra route of the router. A route whose next
// hop is a fixed address of a server targets that server's Node; any
// other is a Blackhole, which the route controller deletes when it lies
// in the cluster CIDR. A failed server list fails the call: a route is
// never reported as a blackhole on an ambiguous answer.
func (r *routes) ListRoutes(ctx context.Context, _ string) ([]*cloudprovider.Route, error) {
	n, err := r.network(ctx)
	if err != nil {
		return nil, err
	}
	router, err := r.getRouter(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]*cloudprovider.Route, 0, len(router.Routes))
	if len(router.Routes) == 0 {
		return out, nil
	}
	owners, err := r.nodesByAddress(ctx)
	if err != nil {
		return nil, err
	}
	for _, rt := range router.Routes {
		route := &cloudprovider.Route{Name: rt.DestinationCIDR + routeNameVia + rt.NextHop, DestinationCIDR: rt.DestinationCIDR}
		hop, err := netip.ParseAddr(rt.NextHop)
		if name, ok := owners[hop.Unmap()]; err == nil && ok {
			route.TargetNode = types.NodeName(name)
		} else {
			route.Blackhole = true
		}
		out = append(out, route)
	}
	return out, nil
}

// nodesByAddress maps every fixed address of every server to the server's
// Node name: one paginated server list.
func (r *routes) nodesByAddress(ctx context.Context) (map[netip.Addr]string, error) {
	list, err := r.instances.listServers(ctx, servers.ListOpts{})
	if err != nil {
		return nil, err
	}
	owners := map[netip.Addr]string{}
	for _, s := range list {
		if s.ID == "" {
			continue
		}
		for _, net := range s.Addresses {
			for _, a := range net.Addrs {
				ip, err := netip.ParseAddr(a.Addr)
				if err != nil || a.Type == "floating" {
					continue
				}
				if _, dup := owners[ip.Unmap()]; !dup { // first server wins: never a blackhole on a clash
					owners[ip.Unmap()] = nodeName(s.Name)
				}
			}
		}
	}
	return owners, nil
}

// CreateRoute routes route.DestinationCIDR to the node's address of the
// same IP family on a subnet of the router, after adding the CIDR to the
// allowed address pairs of the port holding that address. Both steps
// skip what is already there, so a repeated call writes nothing; the pair
// goes first, so a route the router lists always has its pair.
func (r *routes) CreateRoute(ctx context.Context, _ string, _ string, route *cloudprovider.Route) error {
	n, err := r.network(ctx)
	if err != nil {
		return err
	}
	dest, err := parseRouteDestination(route.DestinationCIDR)
	if err != nil {
		return err
	}
	hop, p, err := r.nexthop(ctx, n, route, dest.Addr().Is6())
	if err != nil {
		return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
	}
	if n.pairs {
		if err := r.changePairs(ctx, n, p, dest, true); err != nil {
			return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
		}
	}
	want := routers.Route{DestinationCIDR: dest.String(), NextHop: hop.String()}
	added, err := r.addRoute(ctx, n, want)
	if err != nil {
		return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
	}
	if added {
		klog.FromContext(ctx).Info("Created route", "routerID", r.routerID, "destination", want.DestinationCIDR,
			"nexthop", want.NextHop, "node", route.TargetNode, "portID", p.ID)
	}
	return nil
}

// DeleteRoute removes the router's route(s) that route stands for and
// the allowed address pair of its destination from the next hop's port.
// The route is identified by its Name as ListRoutes gave it (destination
// and next hop), else by a next-hop address in TargetNode (OCCM's
// blackhole routes), else by the fixed addresses of the Node's server. A
// route that is already gone, or whose Node has no server, is success.
func (r *routes) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	n, err := r.network(ctx)
	if err != nil {
		return err
	}
	dest, err := parseRouteDestination(route.DestinationCIDR)
	if err != nil {
		return err
	}
	router, err := r.getRouter(ctx, n)
	if err != nil {
		return err
	}
	hops, err := r.nexthopsOf(ctx, n, route)
	if err != nil {
		return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
	}
	var gone []routers.Route
	for _, rt := range router.Routes {
		if sameRoute(rt, dest, hops) {
			gone = append(gone, rt)
		}
	}
	if len(gone) == 0 {
		klog.FromContext(ctx).V(2).Info("Route already gone", "routerID", r.routerID, "destination", dest, "node", route.TargetNode)
		return nil
	}
	if n.pairs {
		for _, rt := range gone {
			if err := r.removePairsAt(ctx, n, rt.NextHop, dest); err != nil {
				return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
			}
		}
	}
	if err := r.removeRoutes(ctx, n, router, gone); err != nil {
		return fmt.Errorf("route %s to node %s: %w", dest, route.TargetNode, err)
	}
	for _, rt := range gone {
		klog.FromContext(ctx).Info("Deleted route", "routerID", r.routerID, "destination", rt.DestinationCIDR,
			"nexthop", rt.NextHop, "node", route.TargetNode)
	}
	return nil
}

func parseRouteDestination(cidr string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("route destination %q is not a CIDR", cidr)
	}
	return p.Masked(), nil
}

// sameRoute reports whether rt goes to dest via one of hops.
func sameRoute(rt routers.Route, dest netip.Prefix, hops []netip.Addr) bool {
	d, err := netip.ParsePrefix(rt.DestinationCIDR)
	if err != nil || d.Masked() != dest {
		return false
	}
	hop, err := netip.ParseAddr(rt.NextHop)
	return err == nil && slices.Contains(hops, hop.Unmap())
}

// nexthop finds the node's server and, among its ports' fixed addresses
// on the router's subnets, the one of the wanted family: preferably an
// InternalIP of the Node, else the first.
func (r *routes) nexthop(ctx context.Context, n *routeAPI, route *cloudprovider.Route, v6 bool) (netip.Addr, *routePort, error) {
	serverID, err := r.serverOf(ctx, route)
	if err != nil {
		return netip.Addr{}, nil, err
	}
	subnets, err := r.routerSubnets(ctx, n)
	if err != nil {
		return netip.Addr{}, nil, err
	}
	list, err := listRoutePorts(ctx, n, ports.ListOpts{DeviceID: serverID})
	if err != nil {
		return netip.Addr{}, nil, err
	}
	internal := nodeInternalIPs(route.TargetNodeAddresses)
	var found netip.Addr
	var at *routePort
	for i := range list {
		for _, fip := range list[i].FixedIPs {
			ip, err := netip.ParseAddr(fip.IPAddress)
			if err != nil || !subnets[fip.SubnetID] || ip.Is6() != v6 {
				continue
			}
			if slices.Contains(internal, ip) {
				return ip, &list[i], nil
			}
			if !found.IsValid() {
				found, at = ip, &list[i]
			}
		}
	}
	if !found.IsValid() {
		family := 4
		if v6 {
			family = 6
		}
		return netip.Addr{}, nil, fmt.Errorf("server %s has no IPv%d address on a subnet of router %s", serverID, family, r.routerID)
	}
	return found, at, nil
}

// serverOf returns the ID of the node's server: the one Nova names like
// the node, as ListRoutes maps next hops back to Nodes. (A Node not named
// after its server gets no route: ListRoutes would report it under the
// server's name and the route controller would delete it again.)
func (r *routes) serverOf(ctx context.Context, route *cloudprovider.Route) (string, error) {
	inst, err := r.instances.InstanceByName(ctx, string(route.TargetNode))
	if err != nil {
		return "", err
	}
	return inst.ID, nil
}

func nodeInternalIPs(addrs []corev1.NodeAddress) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == corev1.NodeInternalIP {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// nexthopsOf returns the next hops a route to delete may use: the one in
// its Name, else the node server's fixed addresses, else TargetNode as an
// address. None (the node is gone) means nothing to delete.
func (r *routes) nexthopsOf(ctx context.Context, n *routeAPI, route *cloudprovider.Route) ([]netip.Addr, error) {
	if d, h, ok := strings.Cut(route.Name, routeNameVia); ok && d == route.DestinationCIDR {
		if hop, err := netip.ParseAddr(h); err == nil {
			return []netip.Addr{hop.Unmap()}, nil
		}
	}
	if hop, err := netip.ParseAddr(string(route.TargetNode)); err == nil {
		return []netip.Addr{hop.Unmap()}, nil
	}
	if route.TargetNode == "" {
		return nil, nil
	}
	serverID, err := r.serverOf(ctx, route)
	if framework.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := listRoutePorts(ctx, n, ports.ListOpts{DeviceID: serverID})
	if err != nil {
		return nil, err
	}
	var hops []netip.Addr
	for _, p := range list {
		for _, fip := range p.FixedIPs {
			if ip, err := netip.ParseAddr(fip.IPAddress); err == nil {
				hops = append(hops, ip.Unmap())
			}
		}
	}
	return hops, nil
}

// routerSubnets returns the IDs of the subnets the router has an
// interface on.
func (r *routes) routerSubnets(ctx context.Context, n *routeAPI) (map[string]bool, error) {
	list, err := listRoutePorts(ctx, n, ports.ListOpts{DeviceID: r.routerID})
	if err != nil {
		return nil, err
	}
	subnets := map[string]bool{}
	for _, p := range list {
		if p.DeviceOwner == "network:router_gateway" {
			continue
		}
		for _, fip := range p.FixedIPs {
			subnets[fip.SubnetID] = true
		}
	}
	return subnets, nil
}

func (r *routes) getRouter(ctx context.Context, n *routeAPI) (*routers.Router, error) {
	router, err := routers.Get(cloudapi.WithOperation(ctx, "routers.get"), n.client, r.routerID).Extract()
	if err != nil {
		return nil, fmt.Errorf("getting router %s ([Route] router-id): %w", r.routerID, serviceError(err))
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
		return false, fmt.Errorf("adding route to router %s: %w", r.routerID, serviceError(err))
	}
	return true, nil
}

// removeRoutes takes gone out of the router, read as router.
func (r *routes) removeRoutes(ctx context.Context, n *routeAPI, router *routers.Router, gone []routers.Route) error {
	if n.atomic {
		_, err := extraroutes.Remove(cloudapi.WithOperation(ctx, "routers.remove_extraroutes"), n.client, r.routerID, extraroutes.Opts{Routes: &gone}).Extract()
		if err != nil {
			return fmt.Errorf("removing route from router %s: %w", r.routerID, serviceError(err))
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
			return false, fmt.Errorf("updating the routes of router %s: %w", r.routerID, serviceError(err))
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
		case !add && isAPINotFound(err):
			return nil // the port went, and its pairs with it
		case !changedMeanwhile(err) || attempt == maxRouteUpdateAttempts:
			return fmt.Errorf("updating the allowed address pairs of port %s: %w", p.ID, serviceError(err))
		}
		klog.FromContext(ctx).V(2).Info("Port changed meanwhile; retrying", "portID", p.ID, "attempt", attempt)
		var fresh routePort
		err = ports.Get(cloudapi.WithOperation(ctx, "ports.get"), n.client, p.ID).ExtractInto(&fresh)
		if err != nil {
			if !add && isAPINotFound(err) {
				return nil
			}
			return fmt.Errorf("getting port %s: %w", p.ID, serviceError(err))
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
		return nil, fmt.Errorf("listing ports: %w", serviceError(err))
	}
	return all, nil
}

// changedMeanwhile reports whether Neutron refused an update because the
// resource changed: 412 on an If-Match revision, or 409.
func changedMeanwhile(err error) bool {
	var a *apiError
	if errors.As(err, &a) {
		return a.Status == http.StatusPreconditionFailed || a.Status == http.StatusConflict
	}
	return gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed) || gophercloud.ResponseCodeIs(err, http.StatusConflict)
}
