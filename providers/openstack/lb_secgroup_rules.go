package openstack

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file computes the node security group of a Service, for
// [LoadBalancer] manage-security-groups, as OCCM makes it
// (pkg/openstack/loadbalancer_sg.go): one group per Service, named
// lb-sg-<uid>-<namespace>-<name>, whose ingress rules open the Service's
// node ports (and its health check node port) to the member subnet. The
// ovn provider keeps the clients' addresses, so there the node ports are
// opened to spec.loadBalancerSourceRanges (everyone by default). It makes
// no API calls.

// secGroupName is OCCM's name of the Service's security group.
func secGroupName(svc *corev1.Service) string {
	return cut255(fmt.Sprintf("lb-sg-%s-%s-%s", svc.UID, svc.Namespace, svc.Name))
}

// secGroupDescription is OCCM's description of the Service's security group.
func secGroupDescription(clusterName string, svc *corev1.Service) string {
	return fmt.Sprintf("Security Group for %s/%s Service LoadBalancer in cluster %s", svc.Namespace, svc.Name, clusterName)
}

// sgRule is one ingress rule the CCM makes: a protocol and one port, from
// a CIDR.
type sgRule struct {
	EtherType string // "IPv4" or "IPv6"
	Protocol  string // "tcp", "udp" or "sctp"
	Port      int
	Remote    string // a masked CIDR
}

func (r sgRule) String() string {
	return fmt.Sprintf("%s %s/%d from %s", r.EtherType, r.Protocol, r.Port, r.Remote)
}

func (r sgRule) createOpts(groupID string) rules.CreateOpts {
	return rules.CreateOpts{
		Direction: rules.DirIngress, EtherType: rules.RuleEtherType(r.EtherType), SecGroupID: groupID,
		Protocol: rules.RuleProtocol(r.Protocol), PortRangeMin: r.Port, PortRangeMax: r.Port, RemoteIPPrefix: r.Remote,
	}
}

func compareSGRules(a, b sgRule) int {
	return cmp.Or(cmp.Compare(a.EtherType, b.EtherType), cmp.Compare(a.Protocol, b.Protocol),
		cmp.Compare(a.Port, b.Port), cmp.Compare(a.Remote, b.Remote))
}

// desiredSGRules are the rules of svc's group, sorted: each port's node
// port from the member subnet memberCIDR (with ovn, from the source
// ranges instead), and the health check node port from the member subnet.
// The rules are of memberCIDR's IP version, the one the members use.
func desiredSGRules(svc *corev1.Service, memberCIDR netip.Prefix, ovn bool) ([]sgRule, error) {
	ipv6 := memberCIDR.Addr().Is6()
	eth := etherType(ipv6)
	member := memberCIDR.Masked().String()
	sources := []string{member}
	if ovn {
		cidrs, err := allowedCIDRs(svc, ipv6)
		if err != nil {
			return nil, err
		}
		sources = cidrs
		if cidrs == nil {
			sources = []string{everyone(ipv6)}
		}
	}
	var out []sgRule
	for _, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			continue // spec.allocateLoadBalancerNodePorts: false
		}
		proto, ok := ruleProtocol(string(p.Protocol))
		if !ok {
			return nil, fmt.Errorf("port %d: protocol %s cannot be opened in a security group", p.Port, p.Protocol)
		}
		for _, src := range sources {
			out = append(out, sgRule{EtherType: eth, Protocol: proto, Port: int(p.NodePort), Remote: src})
		}
	}
	if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
		out = append(out, sgRule{EtherType: eth, Protocol: "tcp", Port: int(hc), Remote: member})
	}
	slices.SortFunc(out, compareSGRules)
	return slices.Compact(out), nil
}

// planSGRules compares the group's rules with the wanted ones: the rules
// to create, and the rules to delete (every rule the CCM would not make,
// such as Neutron's default egress rules, as OCCM deletes them, and
// duplicates). Rules cannot be changed, only replaced.
func planSGRules(want []sgRule, have []rules.SecGroupRule) (create []sgRule, del []rules.SecGroupRule) {
	wanted := make(map[sgRule]bool, len(want))
	for _, r := range want {
		wanted[r] = true
	}
	kept := map[sgRule]bool{}
	for _, h := range have {
		r, ok := ruleOf(h)
		if !ok || !wanted[r] || kept[r] {
			del = append(del, h)
			continue
		}
		kept[r] = true
	}
	for _, r := range want {
		if !kept[r] {
			create = append(create, r)
		}
	}
	return create, del
}

// ruleOf is the sgRule an existing rule is; false for a rule the CCM does
// not make (egress, from a remote group, a port range, another protocol).
// A rule without a remote prefix is from everyone, as Neutron counts it.
func ruleOf(r rules.SecGroupRule) (sgRule, bool) {
	if r.Direction != string(rules.DirIngress) || r.RemoteGroupID != "" || r.RemoteAddressGroupID != "" ||
		r.PortRangeMin == 0 || r.PortRangeMin != r.PortRangeMax {
		return sgRule{}, false
	}
	proto, ok := ruleProtocol(r.Protocol)
	if !ok || r.Protocol == "" || r.EtherType != "IPv4" && r.EtherType != "IPv6" {
		return sgRule{}, false
	}
	ipv6 := r.EtherType == "IPv6"
	remote := cloud.FirstOf(r.RemoteIPPrefix, everyone(ipv6))
	p, err := netip.ParsePrefix(remote)
	if err != nil || p.Addr().Is6() != ipv6 {
		return sgRule{}, false
	}
	return sgRule{EtherType: r.EtherType, Protocol: proto, Port: r.PortRangeMin, Remote: p.Masked().String()}, true
}

// ruleProtocol is Neutron's protocol name for a Service port protocol
// ("" is TCP) or a rule's protocol (a name or an IANA number).
func ruleProtocol(p string) (string, bool) {
	switch strings.ToLower(p) {
	case "", "tcp", "6":
		return "tcp", true
	case "udp", "17":
		return "udp", true
	case "sctp", "132":
		return "sctp", true
	}
	return "", false
}

func etherType(ipv6 bool) string {
	if ipv6 {
		return "IPv6"
	}
	return "IPv4"
}

func everyone(ipv6 bool) string {
	if ipv6 {
		return "::/0"
	}
	return "0.0.0.0/0"
}
