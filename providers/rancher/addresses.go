package rancher

import (
	"fmt"
	"net/netip"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/nodeaddr"
)

// nodeAddresses returns a host's Node addresses, each IP reported once,
// by this rule:
//
//   - the host's agentIpAddress, the address Rancher's agent registered
//     with and the one the managed network and the load balancers' public
//     endpoints use, is the first InternalIP;
//   - every other address of the host's ipAddresses link is an InternalIP
//     when it is private (RFC 1918 and RFC 6598 IPv4, IPv6 unique local)
//     and an ExternalIP when it is public; loopback, link-local and
//     unspecified addresses are left out;
//   - the IPs in the host labels named by RANCHER_EXTERNAL_IP_LABELS
//     (io.rancher.host.external_dns_ip by default; a comma-separated list
//     is accepted) are ExternalIPs, even when private: the user said so;
//   - the hostname is the Hostname.
//
// The existing CCM reported every IP as both InternalIP and ExternalIP;
// here an IP is never both (a label's IP that is also the agent IP stays
// the InternalIP). The error names every malformed address; the others are
// returned alongside it.
func nodeAddresses(h *rancher.Host, ips []rancher.IpAddress, externalLabels []string) ([]corev1.NodeAddress, error) {
	b := nodeaddr.NewBuilder(nodeaddr.DualStack)
	internal := map[string]bool{}
	addInternal := func(s string) {
		if ip, ok := usable(s); ok {
			internal[ip.String()] = true
		}
		b.AddInternal(s)
	}
	addInternal(h.AgentIpAddress)
	var public []string
	for _, ip := range ips {
		a, err := netip.ParseAddr(strings.TrimSpace(ip.Address))
		_, ok := usable(ip.Address)
		switch {
		case err != nil && ip.Address != "":
			b.AddInternal(ip.Address) // Build reports it as malformed
		case !ok:
		case isPrivate(a.Unmap()):
			addInternal(ip.Address)
		default:
			public = append(public, ip.Address)
		}
	}
	for _, key := range externalLabels {
		for s := range strings.SplitSeq(labelValue(h.Labels, key), ",") {
			public = append(public, strings.TrimSpace(s))
		}
	}
	for _, s := range public {
		if ip, ok := usable(s); ok && internal[ip.String()] {
			continue
		}
		b.AddExternal(s)
	}
	b.AddHostname(h.Hostname)
	return b.Build()
}

// checkIPs reports a host's ipAddresses as Cattle would never answer them
// as malformed: none at all (Cattle lists at least the agent's address),
// one that is no IP, or one listed twice. Read in part, they would give
// the Node part of its addresses.
func checkIPs(h *rancher.Host, ips []rancher.IpAddress) error {
	if len(ips) == 0 {
		return fmt.Errorf("malformed response: host %s (%s) has no ipAddresses", h.Id, h.Hostname)
	}
	seen := make(map[string]bool, len(ips))
	for _, ip := range ips {
		if _, err := netip.ParseAddr(strings.TrimSpace(ip.Address)); err != nil {
			return fmt.Errorf("malformed response: host %s (%s): ipAddress %s holds %q, no IP", h.Id, h.Hostname, ip.Id, ip.Address)
		}
		if seen[ip.Id] {
			// A collection lists a resource once: a repeated one is
			// half an answer, whatever it displaced.
			return fmt.Errorf("malformed response: host %s (%s): ipAddress %q listed twice", h.Id, h.Hostname, ip.Id)
		}
		seen[ip.Id] = true
	}
	return nil
}

// usable parses s and reports whether it is an address a Node can be
// reached at: valid, and not loopback, link-local, multicast or
// unspecified.
func usable(s string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
		return netip.Addr{}, false
	}
	return ip, true
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, private in
// practice though netip does not count it.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// isPrivate reports whether ip is in a private range: RFC 1918 and RFC
// 6598 IPv4, fc00::/7 IPv6.
func isPrivate(ip netip.Addr) bool {
	return ip.IsPrivate() || sharedAddressSpace.Contains(ip)
}
