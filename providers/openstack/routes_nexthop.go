package openstack

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
)

// Next hops: which address of a node's server a route goes through.

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
