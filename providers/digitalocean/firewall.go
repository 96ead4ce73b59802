package digitalocean

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// This file is the public-access firewall's desired state, computed from
// the Services alone, and the API calls that find, create and update it.
// The rules are those of the existing CCM's firewall controller
// (do/firewall_controller.go), so a cluster moves over without its
// firewall changing:
//
//   - a NodePort Service opens each port's NodePort (tcp or udp) to
//     0.0.0.0/0 and ::/0;
//   - a LoadBalancer Service opens nothing for a REGIONAL load balancer,
//     which reaches the nodes over the VPC, nor for an INTERNAL one; a
//     REGIONAL_NETWORK EXTERNAL load balancer passes clients' packets
//     through to the nodes on the Service's ports, so those ports are
//     opened to everyone, and its health-check port (kube-proxy's 10256,
//     or the healthCheckNodePort with externalTrafficPolicy Local) to the
//     load balancer alone once its ID is known;
//   - ClusterIP and ExternalName Services, SCTP ports and unallocated
//     NodePorts open nothing;
//   - outbound, everything is allowed (a DigitalOcean firewall denies what
//     no rule allows, outbound too).

// AnnotationFirewallManaged set to "false" on a Service keeps its ports
// out of the public-access firewall (e.g. a NodePort meant for the VPC
// only). A value that is not a boolean is ignored, as by the existing CCM.
const AnnotationFirewallManaged = "kubernetes.digitalocean.com/firewall-managed"

// The Service annotations the firewall reads to know a load balancer's
// type and network; the load-balancer code owns their meaning.
const (
	firewallAnnLBID      = "kubernetes.digitalocean.com/load-balancer-id"
	firewallAnnLBType    = "service.beta.kubernetes.io/do-loadbalancer-type"
	firewallAnnLBNetwork = "service.beta.kubernetes.io/do-loadbalancer-network"

	firewallKubeProxyHealthPort = 10256
)

// everywhere is the source of a rule open to the Internet.
var everywhere = []string{"0.0.0.0/0", "::/0"}

// firewallOutboundRules allow all outbound traffic, as the existing CCM's
// firewall does.
func firewallOutboundRules() []godo.OutboundRule {
	all := func(proto, ports string) godo.OutboundRule {
		return godo.OutboundRule{Protocol: proto, PortRange: ports, Destinations: &godo.Destinations{Addresses: slices.Clone(everywhere)}}
	}
	return []godo.OutboundRule{all("icmp", ""), all("tcp", "all"), all("udp", "all")}
}

// firewallSpec is what the controller keeps: the firewall's name and the
// droplet tags it applies to (PUBLIC_ACCESS_FIREWALL_NAME and _TAGS), and
// the default load balancer type (DEFAULT_LB_TYPE).
type firewallSpec struct {
	name          string
	tags          []string
	defaultLBType string
}

// desiredFirewall is the firewall request for svcs: one inbound rule per
// protocol, port and source, sorted by protocol, port and source.
func (s firewallSpec) desiredFirewall(logger klog.Logger, svcs []*corev1.Service) *godo.FirewallRequest {
	seen := map[string]bool{}
	var rules []godo.InboundRule
	for _, svc := range svcs {
		for _, r := range s.serviceRules(logger, svc) {
			if k := inboundKey(r); !seen[k] {
				seen[k] = true
				rules = append(rules, r)
			}
		}
	}
	slices.SortFunc(rules, func(a, b godo.InboundRule) int {
		pa, _ := strconv.Atoi(a.PortRange)
		pb, _ := strconv.Atoi(b.PortRange)
		return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(pa, pb), cmp.Compare(inboundKey(a), inboundKey(b)))
	})
	return &godo.FirewallRequest{
		Name:          s.name,
		InboundRules:  rules,
		OutboundRules: firewallOutboundRules(),
		Tags:          slices.Clone(s.tags),
	}
}

// serviceRules are the inbound rules one Service needs.
func (s firewallSpec) serviceRules(logger klog.Logger, svc *corev1.Service) []godo.InboundRule {
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil
	}
	logger = logger.WithValues("service", klog.KObj(svc))
	if v, ok := svc.Annotations[AnnotationFirewallManaged]; ok {
		managed, err := strconv.ParseBool(v)
		switch {
		case err != nil:
			logger.Info("Ignoring an annotation that is not a boolean: the Service's ports are managed", "annotation", AnnotationFirewallManaged, "value", v)
		case !managed:
			return nil
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort {
		var rules []godo.InboundRule
		for _, p := range svc.Spec.Ports {
			if proto := firewallProtocol(logger, p); proto != "" && p.NodePort != 0 {
				rules = append(rules, inboundRule(proto, int(p.NodePort), &godo.Sources{Addresses: slices.Clone(everywhere)}))
			}
		}
		return rules
	}
	return s.loadBalancerRules(logger, svc)
}

// loadBalancerRules opens what a REGIONAL_NETWORK EXTERNAL load balancer
// needs: the Service's ports, and the health-check port.
func (s firewallSpec) loadBalancerRules(logger klog.Logger, svc *corev1.Service) []godo.InboundRule {
	lbType := strings.ToUpper(svc.Annotations[firewallAnnLBType])
	if lbType == "" {
		lbType = s.defaultLBType
	}
	network := strings.ToUpper(cmp.Or(svc.Annotations[firewallAnnLBNetwork], "EXTERNAL"))
	switch {
	case lbType != LoadBalancerTypeRegional && lbType != LoadBalancerTypeRegionalNetwork:
		logger.Info("The Service's load balancer type is not valid: the firewall opens nothing for it", "annotation", firewallAnnLBType, "value", lbType)
		return nil
	case network != "EXTERNAL" && network != "INTERNAL":
		logger.Info("The Service's load balancer network is not valid: the firewall opens nothing for it", "annotation", firewallAnnLBNetwork, "value", network)
		return nil
	case lbType != LoadBalancerTypeRegionalNetwork || network != "EXTERNAL":
		return nil
	}
	hcPort := firewallKubeProxyHealthPort
	if path, port := helpers.GetServiceHealthCheckPathPort(svc); path != "" {
		hcPort = int(port)
	}
	hcSources := &godo.Sources{Addresses: slices.Clone(everywhere)}
	if id := svc.Annotations[firewallAnnLBID]; id != "" {
		hcSources = &godo.Sources{LoadBalancerUIDs: []string{id}}
	}
	rules := []godo.InboundRule{inboundRule("tcp", hcPort, hcSources)}
	for _, p := range svc.Spec.Ports {
		if proto := firewallProtocol(logger, p); proto != "" {
			rules = append(rules, inboundRule(proto, int(p.Port), &godo.Sources{Addresses: slices.Clone(everywhere)}))
		}
	}
	return rules
}

// firewallProtocol is the rule protocol of a Service port, "" for one a
// firewall cannot express (SCTP).
func firewallProtocol(logger klog.Logger, p corev1.ServicePort) string {
	switch p.Protocol {
	case corev1.ProtocolTCP, "":
		return "tcp"
	case corev1.ProtocolUDP:
		return "udp"
	}
	logger.V(2).Info("Skipping a Service port: firewalls open tcp and udp only", "port", p.Port, "protocol", p.Protocol)
	return ""
}

func inboundRule(proto string, port int, src *godo.Sources) godo.InboundRule {
	return godo.InboundRule{Protocol: proto, PortRange: strconv.Itoa(port), Sources: src}
}

// Comparing: the API may answer "0" for the "all" a request said, order
// lists differently and leave the rule action empty for "allow"; none of
// that is a difference.

func inboundKey(r godo.InboundRule) string {
	var s godo.Sources
	if r.Sources != nil {
		s = *r.Sources
	}
	return ruleKey(r.Protocol, r.PortRange, string(r.Action), s.Addresses, s.Tags, s.DropletIDs, s.LoadBalancerUIDs, s.KubernetesIDs)
}

func outboundKey(r godo.OutboundRule) string {
	var d godo.Destinations
	if r.Destinations != nil {
		d = *r.Destinations
	}
	return ruleKey(r.Protocol, r.PortRange, string(r.Action), d.Addresses, d.Tags, d.DropletIDs, d.LoadBalancerUIDs, d.KubernetesIDs)
}

// ruleKey is a rule in a canonical text form, e.g.
// "tcp:30080:allow addresses=0.0.0.0/0,::/0".
func ruleKey(proto, ports, action string, addrs, tags []string, dropletIDs []int, lbs, k8s []string) string {
	proto = strings.ToLower(proto)
	switch {
	case proto == "icmp":
		ports = ""
	case ports == "" || ports == "0":
		ports = "all"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%s:%s", proto, ports, cmp.Or(strings.ToLower(action), string(godo.FirewallRuleActionAllow)))
	list := func(name string, v []string) {
		if len(v) > 0 {
			fmt.Fprintf(&b, " %s=%s", name, strings.Join(sortedSet(v), ","))
		}
	}
	list("addresses", addrs)
	list("tags", tags)
	ids := make([]string, len(dropletIDs))
	for i, id := range dropletIDs {
		ids[i] = strconv.Itoa(id)
	}
	list("droplets", ids)
	list("load_balancers", lbs)
	list("kubernetes", k8s)
	return b.String()
}

func sortedSet(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

func ruleKeys[T any](rules []T, key func(T) string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = key(r)
	}
	return sortedSet(out)
}

// firewallDiff lists what fw lacks of want (added) and what it holds that
// want does not (removed), as rule keys and "name=" / "tags=" /
// "droplets=" entries; both empty means nothing to write. Droplet IDs are
// compared too: the firewall applies to the tagged droplets only.
func firewallDiff(fw *godo.Firewall, want *godo.FirewallRequest) (added, removed []string) {
	have := firewallEntries(fw.Name, fw.Tags, fw.DropletIDs, ruleKeys(fw.InboundRules, inboundKey), ruleKeys(fw.OutboundRules, outboundKey))
	wanted := firewallEntries(want.Name, want.Tags, want.DropletIDs, ruleKeys(want.InboundRules, inboundKey), ruleKeys(want.OutboundRules, outboundKey))
	for _, e := range wanted {
		if !slices.Contains(have, e) {
			added = append(added, e)
		}
	}
	for _, e := range have {
		if !slices.Contains(wanted, e) {
			removed = append(removed, e)
		}
	}
	return added, removed
}

func firewallEntries(name string, tags []string, dropletIDs []int, in, out []string) []string {
	ids := slices.Clone(dropletIDs)
	slices.Sort(ids)
	e := []string{"name=" + name, "tags=" + strings.Join(sortedSet(tags), ","), fmt.Sprintf("droplets=%v", slices.Compact(ids))}
	for _, k := range in {
		e = append(e, "inbound "+k)
	}
	for _, k := range out {
		e = append(e, "outbound "+k)
	}
	return e
}

// findFirewall returns the first firewall called name (nil when there is
// none), reading every page of GET /v2/firewalls. Any failure fails the
// whole lookup: a partial list must never make the firewall look missing,
// or a second one would be created.
func findFirewall(ctx context.Context, c *godo.Client, name string) (*godo.Firewall, error) {
	all, err := cloud.ListAll(ctx, "firewalls", c.Firewalls.List)
	if err != nil {
		return nil, err
	}
	var found []godo.Firewall
	for _, fw := range all {
		if fw.Name == name {
			found = append(found, fw)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	if len(found) > 1 {
		ids := make([]string, len(found))
		for i, fw := range found {
			ids[i] = fw.ID
		}
		klog.FromContext(ctx).Info("Several firewalls have the public-access firewall's name; managing the first, leaving the others alone",
			"firewall", name, "ids", ids)
	}
	return &found[0], nil
}
