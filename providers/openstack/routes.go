package openstack

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
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
	availability, _ := cloud.EndpointAvailability(p.cfg.Global.EndpointType) // checked by Validate
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
		return nil, fmt.Errorf("listing Neutron extensions: %w", cloud.ServiceError(err))
	}
	if !exts["extraroute"] && !exts["extraroute-atomic"] {
		return nil, fmt.Errorf("[Route] router-id is set, but Neutron at %s has neither the extraroute nor the extraroute-atomic extension",
			cloud.RedactedURL(client.Endpoint))
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
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		if err := s.validate(); err != nil {
			// Left out, the server's routes would read as blackholes.
			return nil, fmt.Errorf("listing servers: %w", err)
		}
		if listed[s.ID] {
			// A list that repeats a server may leave another out: its
			// routes would read as blackholes, and be deleted.
			return nil, fmt.Errorf("listing servers: malformed response: server %s listed twice", s.ID)
		}
		listed[s.ID] = true
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
