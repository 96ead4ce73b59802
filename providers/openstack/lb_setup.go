package openstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// newLoadBalancer builds the load balancers of [LoadBalancer] enabled=true:
// the Neutron and Octavia clients of the region, and the features of the
// Octavia API version. A catalog without Octavia or Neutron disables load
// balancers with a log line, as in OCCM (enabled defaults to true); an
// Octavia that does not answer fails Init, so the CCM retries at start-up
// rather than serving no load balancers until it restarts.
func newLoadBalancer(ctx context.Context, env *framework.Env, pc *gophercloud.ProviderClient, eo gophercloud.EndpointOpts,
	cfg *Config, inst *instances) (cloudprovider.LoadBalancer, error) {
	log := klog.FromContext(ctx)
	network, err := openstack.NewNetworkV2(pc, eo)
	if err == nil {
		var lbClient *gophercloud.ServiceClient
		if lbClient, err = openstack.NewLoadBalancerV2(pc, eo); err == nil {
			return buildLoadBalancer(ctx, env, network, lbClient, cfg, inst)
		}
	}
	var missing gophercloud.ErrEndpointNotFound
	if errors.As(err, &missing) {
		log.Info("Load balancers disabled: no network (Neutron) or load-balancer (Octavia) endpoint in the Keystone catalog; set [LoadBalancer] enabled = false to silence this",
			"region", eo.Region, "interface", eo.Availability)
		return nil, nil
	}
	return nil, fmt.Errorf("[LoadBalancer] enabled: cannot use the network (Neutron) or load-balancer (Octavia) API: %w", cloud.ServiceError(err))
}

func buildLoadBalancer(ctx context.Context, env *framework.Env, network, lbClient *gophercloud.ServiceClient, cfg *Config, inst *instances) (cloudprovider.LoadBalancer, error) {
	log := klog.FromContext(ctx)
	minor, err := octaviaMinor(ctx, lbClient)
	if err != nil {
		return nil, err
	}
	lbCfg := &cfg.LoadBalancer
	d := &lbDriver{
		oct: &octaviaAPI{lb: lbClient}, net: &fipAPI{net: network}, env: env, cfg: lbCfg,
		classes: cfg.LoadBalancerClass, features: featuresFor(minor, lbCfg.LBProvider), instances: inst,
		known: newLBKnowledge(env.LoadBalancerCacheTTL >= 0),
	}
	if lbCfg.ManageSecurityGroups {
		d.sg = &secGroupAPI{net: network, ovn: lbCfg.LBProvider == "ovn"}
	}
	log.Info("Octavia load balancers enabled", "octaviaAPI", fmt.Sprintf("v2.%d", minor), "provider", lbCfg.LBProvider,
		"manageSecurityGroups", lbCfg.ManageSecurityGroups, "loadBalancerURL", cloud.RedactedURL(lbClient.Endpoint))
	return framework.NewLoadBalancer(env, d, framework.LoadBalancerOptions[LoadBalancerConfig]{
		AnnotationPrefix: AnnotationPrefix,
		IDAnnotation:     AnnotationLoadBalancerID,
		Name:             loadBalancerName,
		NewConfig:        func() *LoadBalancerConfig { return newLBConfig(lbCfg) },
		Hostname:         func(c *LoadBalancerConfig) string { return c.Hostname },
	}), nil
}

// octaviaMinor is the newest v2 minor version Octavia advertises (the
// document NewLoadBalancerV2 already checked).
func octaviaMinor(ctx context.Context, c *gophercloud.ServiceClient) (int, error) {
	pages, err := apiversions.List(c).AllPages(lbOp(ctx, "loadbalancer.versions.list"))
	if err != nil {
		return 0, fmt.Errorf("[LoadBalancer] enabled: reading the Octavia API versions: %w", cloud.ServiceError(err))
	}
	versions, err := apiversions.ExtractAPIVersions(pages)
	if err != nil {
		return 0, fmt.Errorf("[LoadBalancer] enabled: reading the Octavia API versions: %w", err)
	}
	best := -1
	for _, v := range versions {
		if rest, ok := strings.CutPrefix(v.ID, "v2."); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > best {
				best = n
			}
		} else if v.ID == "v2" {
			best = max(best, 0)
		}
	}
	if best < 0 {
		return 0, errors.New("[LoadBalancer] enabled: Octavia advertises no v2 API version")
	}
	return best, nil
}

// memberNodes are the nodes that pass the node selector, with their
// addresses. A Node without an IP address (not yet updated by the node
// controller: a kubelet with an external cloud provider reports only its
// hostname, and the node controller sets the addresses just after the
// providerID, whose change is what makes the service controller sync the
// load balancers, once) is looked up in Nova by its providerID; one whose
// server is gone is left out, while any other failure fails the sync
// rather than dropping the node's members.
func (d *lbDriver) memberNodes(ctx context.Context, req *lbRequest, cfg *LoadBalancerConfig) ([]nodeAddrs, error) {
	sel, err := parseNodeSelector(cfg.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("annotation %q: %w", annotationKey("node-selector"), err)
	}
	out := make([]nodeAddrs, 0, len(req.Nodes))
	for _, n := range req.Nodes {
		if n == nil || !sel.matches(n) {
			continue
		}
		addrs := n.Status.Addresses
		var serverID string
		if n.Spec.ProviderID != "" {
			id, err := Codec.Parse(n.Spec.ProviderID)
			switch {
			case err == nil:
				serverID = id.Value
			case !hasIPAddress(addrs) && d.instances != nil:
				klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer", "node", klog.KObj(n), "err", err)
				continue
			}
		}
		if !hasIPAddress(addrs) && serverID != "" && d.instances != nil {
			inst, err := d.instances.InstanceByID(ctx, serverID)
			if framework.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("addresses of node %s: %w", n.Name, err)
			}
			addrs = inst.Addresses
		}
		out = append(out, nodeAddrs{name: n.Name, serverID: serverID, addrs: addrs})
	}
	return out, nil
}

// hasIPAddress reports whether addrs hold an InternalIP or ExternalIP.
func hasIPAddress(addrs []corev1.NodeAddress) bool {
	return slices.ContainsFunc(addrs, func(a corev1.NodeAddress) bool {
		return a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP
	})
}

// nodeSubnet is the subnet of the first node address, for a load balancer
// whose VIP subnet is configured nowhere (as OCCM finds it).
func (d *lbDriver) nodeSubnet(ctx context.Context, nodes []nodeAddrs, ipv6 bool) (string, error) {
	for _, n := range nodes {
		addr := memberAddress(n.addrs, ipv6)
		if addr == "" {
			continue
		}
		pages, err := ports.List(d.net.net, ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{IPAddress: addr}}}).AllPages(lbOp(ctx, "ports.list"))
		if err != nil {
			return "", fmt.Errorf("finding the subnet of node %s (set [LoadBalancer] subnet-id): %w", n.name, cloud.ServiceError(err))
		}
		list, err := ports.ExtractPorts(pages)
		if err != nil {
			return "", err
		}
		for _, p := range list {
			for _, ip := range p.FixedIPs {
				if normalizeIP(ip.IPAddress) == addr {
					return ip.SubnetID, nil
				}
			}
		}
		return "", fmt.Errorf("no Neutron port has node %s's address %s: set [LoadBalancer] subnet-id or the %s annotation", n.name, addr, annotationKey("subnet-id"))
	}
	return "", fmt.Errorf("no node address to find the load balancer subnet from: set [LoadBalancer] subnet-id or the %s annotation", annotationKey("subnet-id"))
}
