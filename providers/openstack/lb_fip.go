package openstack

import (
	"context"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file gives a load balancer its public address: a Neutron floating
// IP on the VIP port. Floating IP calls do not make the load balancer
// PENDING_*, so they can share a sync with an Octavia write.

// fipAPI is the Neutron API of one region, for floating IPs.
type fipAPI struct {
	net *gophercloud.ServiceClient

	mu sync.Mutex
	// externalNet caches the discovered external network ("" with
	// externalErr when there is none or several).
	externalDone bool
	externalNet  string
	externalErr  error
}

// fipDescription names the Service a floating IP is for, as OCCM writes
// it; a floating IP kept after its load balancer went (keep-floatingip, or
// the ERROR recovery) is found again by it.
func fipDescription(clusterName string, svc *corev1.Service) string {
	return fmt.Sprintf("Floating IP for Kubernetes external service %s/%s from cluster %s", svc.Namespace, svc.Name, clusterName)
}

// fipByPort is the floating IP on port, nil for none.
func (n *fipAPI) fipByPort(ctx context.Context, portID string) (*floatingips.FloatingIP, error) {
	fips, err := n.listFIPs(ctx, floatingips.ListOpts{PortID: portID})
	if err != nil || len(fips) == 0 {
		return nil, err
	}
	return &fips[0], nil
}

// ownFIP is the floating IP the CCM made for a Service (its description)
// on port or on none, nil for none: what a deletion releases when the
// port's own list showed none. A list that came back short must not leave
// the address allocated once the port, the one way to it, is gone.
func (n *fipAPI) ownFIP(ctx context.Context, description, portID string) (*floatingips.FloatingIP, error) {
	fips, err := n.listFIPs(ctx, floatingips.ListOpts{Description: description})
	if err != nil {
		return nil, err
	}
	for i := range fips {
		if fips[i].PortID == portID || fips[i].PortID == "" {
			return &fips[i], nil
		}
	}
	return nil, nil
}

func (n *fipAPI) listFIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	q, err := opts.ToFloatingIPListQuery()
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	fips, err := cloud.ListAll[floatingips.FloatingIP](lbOp(ctx, "floatingips.list"), n.net, n.net.ServiceURL("floatingips")+q, "floatingips")
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	return fips, nil
}

// fipRequest is the floating IP a Service asks for.
type fipRequest struct {
	portID      string
	address     string // spec.loadBalancerIP, "" for any
	networkID   string // "" to discover the external network
	subnetID    string
	subnetName  string // glob, or ~regexp
	subnetTags  string
	description string
}

// ensure associates a floating IP with the VIP port: the one named by
// spec.loadBalancerIP, else one left unassociated by an earlier load
// balancer of the Service (same description), else a new one. It returns
// nil when no external network exists (the load balancer stays internal).
func (n *fipAPI) ensure(ctx context.Context, want fipRequest) (*floatingips.FloatingIP, error) {
	if want.address != "" {
		fips, err := n.listFIPs(ctx, floatingips.ListOpts{FloatingIP: want.address})
		if err != nil {
			return nil, err
		}
		if len(fips) > 0 {
			if fips[0].PortID != "" && fips[0].PortID != want.portID {
				return nil, fmt.Errorf("floating IP %s (spec.loadBalancerIP) is in use by port %s", want.address, fips[0].PortID)
			}
			return n.associate(ctx, &fips[0], want.portID)
		}
	} else {
		fips, err := n.listFIPs(ctx, floatingips.ListOpts{Description: want.description})
		if err != nil {
			return nil, err
		}
		for i := range fips {
			if fips[i].PortID == want.portID {
				return &fips[i], nil // made by a sync whose answer was lost
			}
		}
		for i := range fips {
			if fips[i].PortID == "" {
				return n.associate(ctx, &fips[i], want.portID)
			}
		}
	}
	networkID := want.networkID
	if networkID == "" {
		var err error
		if networkID, err = n.externalNetwork(ctx); err != nil || networkID == "" {
			return nil, err
		}
	}
	opts := floatingips.CreateOpts{
		FloatingNetworkID: networkID, PortID: want.portID, FloatingIP: want.address,
		SubnetID: want.subnetID, Description: want.description,
	}
	if want.subnetID != "" || want.address != "" || want.subnetName == "" && want.subnetTags == "" {
		return n.create(ctx, opts)
	}
	candidates, err := n.matchingSubnets(ctx, networkID, want.subnetName, want.subnetTags)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, id := range candidates {
		opts.SubnetID = id
		fip, err := n.create(ctx, opts)
		if err == nil {
			return fip, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("no subnet of network %s matching floating-subnet %q / floating-subnet-tags %q could give a floating IP (last error: %w)",
		networkID, want.subnetName, want.subnetTags, lastErr)
}

func (n *fipAPI) create(ctx context.Context, opts floatingips.CreateOpts) (*floatingips.FloatingIP, error) {
	fip, err := floatingips.Create(lbOp(ctx, "floatingips.create"), n.net, opts).Extract()
	if err != nil {
		return nil, fmt.Errorf("creating a floating IP on network %s: %w", opts.FloatingNetworkID, cloud.ServiceError(err))
	}
	return fip, nil
}

// associate points fip at portID (nothing to do when it already is).
func (n *fipAPI) associate(ctx context.Context, fip *floatingips.FloatingIP, portID string) (*floatingips.FloatingIP, error) {
	if fip.PortID == portID {
		return fip, nil
	}
	updated, err := floatingips.Update(lbOp(ctx, "floatingips.update"), n.net, fip.ID, floatingips.UpdateOpts{PortID: &portID}).Extract()
	if err != nil {
		return nil, fmt.Errorf("associating floating IP %s with port %s: %w", fip.FloatingIP, portID, cloud.ServiceError(err))
	}
	return updated, nil
}

// disassociate detaches fip from its port, keeping it in the project.
func (n *fipAPI) disassociate(ctx context.Context, fip *floatingips.FloatingIP) error {
	_, err := floatingips.Update(lbOp(ctx, "floatingips.update"), n.net, fip.ID, floatingips.UpdateOpts{PortID: new(string)}).Extract()
	if err != nil && !cloud.IsAPINotFound(err) {
		return fmt.Errorf("detaching floating IP %s: %w", fip.FloatingIP, cloud.ServiceError(err))
	}
	return nil
}

// release deletes fip; already gone is fine.
func (n *fipAPI) release(ctx context.Context, fip *floatingips.FloatingIP) error {
	err := floatingips.Delete(lbOp(ctx, "floatingips.delete"), n.net, fip.ID).ExtractErr()
	if err != nil && !cloud.IsAPINotFound(err) {
		return fmt.Errorf("releasing floating IP %s: %w", fip.FloatingIP, cloud.ServiceError(err))
	}
	return nil
}

// externalNetwork is the project's only external network, looked up once;
// "" when there is none (OCCM then makes the load balancer internal).
func (n *fipAPI) externalNetwork(ctx context.Context) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.externalDone {
		return n.externalNet, n.externalErr
	}
	opts := external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: new(true)}
	pages, err := networks.List(n.net, opts).AllPages(lbOp(ctx, "networks.list"))
	if err != nil {
		return "", fmt.Errorf("looking for the external network (set [LoadBalancer] floating-network-id): %w", cloud.ServiceError(err))
	}
	nets, err := networks.ExtractNetworks(pages)
	if err != nil {
		return "", err
	}
	switch len(nets) {
	case 0:
		klog.FromContext(ctx).Info("No external network: load balancers get no floating IP; set [LoadBalancer] floating-network-id")
	case 1:
		n.externalNet = nets[0].ID
	default:
		n.externalErr = fmt.Errorf("%d external networks: set [LoadBalancer] floating-network-id or the %s annotation", len(nets), annotationKey("floating-network-id"))
	}
	n.externalDone = true
	return n.externalNet, n.externalErr
}

// matchingSubnets are the IDs of networkID's subnets whose name matches
// pattern (a glob, or a regular expression after ~) and that carry every
// tag of tags (comma-separated).
func (n *fipAPI) matchingSubnets(ctx context.Context, networkID, pattern, tags string) ([]string, error) {
	pages, err := subnets.List(n.net, subnets.ListOpts{NetworkID: networkID, Tags: tags}).AllPages(lbOp(ctx, "subnets.list"))
	if err != nil {
		return nil, fmt.Errorf("listing subnets of network %s: %w", networkID, cloud.ServiceError(err))
	}
	all, err := subnets.ExtractSubnets(pages)
	if err != nil {
		return nil, err
	}
	match, err := nameMatcher(pattern)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		if match(s.Name) {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no subnet of network %s matches floating-subnet %q and floating-subnet-tags %q", networkID, pattern, tags)
	}
	return ids, nil
}

// nameMatcher matches names against a glob, or a regular expression after
// ~; "" matches everything.
func nameMatcher(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return func(string) bool { return true }, nil
	}
	if re, ok := strings.CutPrefix(pattern, "~"); ok {
		r, err := regexp.Compile(re)
		if err != nil {
			return nil, fmt.Errorf("floating-subnet %q: %w", pattern, err)
		}
		return r.MatchString, nil
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("floating-subnet %q: %w", pattern, err)
	}
	return func(s string) bool { ok, _ := path.Match(pattern, s); return ok }, nil
}

func isIPv6Addr(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	return err == nil && ip.Is6()
}
