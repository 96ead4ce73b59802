package brightbox

import (
	"errors"
	"fmt"
	"net/netip"

	brightbox "github.com/brightbox/gobrightbox/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/nodeaddr"
)

// nodeAddresses returns a server's Node addresses. By default: each
// interface's private IPv4 as InternalIP, its IPv6 and every cloud IP
// (IPv4 and IPv6) as ExternalIP, the hostname as Hostname and the fqdns
// (the server's, its cloud IPs') as ExternalDNS. With legacy (the
// BRIGHTBOX_LEGACY_ADDRESSES setting) it is the existing CCM's list
// instead. The error names every malformed address; the others are
// returned alongside it.
func nodeAddresses(s *brightbox.Server, legacy bool) ([]corev1.NodeAddress, error) {
	if legacy {
		return legacyNodeAddresses(s)
	}
	b := nodeaddr.NewBuilder(nodeaddr.DualStack)
	for _, iface := range s.Interfaces {
		b.AddInternal(iface.IPv4Address)
		b.AddExternal(iface.IPv6Address)
	}
	for _, cip := range s.CloudIPs {
		b.AddExternal(cloudIPv4(cip), cip.PublicIPv6)
		b.AddDNS(corev1.NodeExternalDNS, cip.Fqdn)
	}
	b.AddDNS(corev1.NodeExternalDNS, s.Fqdn)
	b.AddHostname(s.Hostname)
	return b.Build()
}

// legacyNodeAddresses is the existing CCM's nodeAddressesFromServer, in its
// order: Hostname, the server's fqdn as ExternalDNS, every interface IPv4
// and IPv6 as ExternalIP, then each cloud IP's IPv4 as ExternalIP and fqdn
// as ExternalDNS. No InternalIP. Unlike it, an empty field is left out
// rather than reported as an empty address, and a malformed IP is an
// error (convert fails the server) rather than an address.
func legacyNodeAddresses(s *brightbox.Server) ([]corev1.NodeAddress, error) {
	var (
		out  []corev1.NodeAddress
		errs []error
	)
	add := func(kind corev1.NodeAddressType, addr string) {
		if addr != "" {
			out = append(out, corev1.NodeAddress{Type: kind, Address: addr})
		}
	}
	addIP := func(ip string) {
		if ip == "" {
			return
		}
		a, err := netip.ParseAddr(ip)
		if err != nil || a.Zone() != "" {
			errs = append(errs, fmt.Errorf("invalid %s %q", corev1.NodeExternalIP, ip))
			return
		}
		add(corev1.NodeExternalIP, a.Unmap().String())
	}
	add(corev1.NodeHostName, s.Hostname)
	add(corev1.NodeExternalDNS, s.Fqdn)
	for _, iface := range s.Interfaces {
		addIP(iface.IPv4Address)
		addIP(iface.IPv6Address)
	}
	for _, cip := range s.CloudIPs {
		addIP(cloudIPv4(cip))
		add(corev1.NodeExternalDNS, cip.Fqdn)
	}
	return out, errors.Join(errs...)
}

// cloudIPv4 is a cloud IP's IPv4 address: public_ipv4, or public_ip, the
// older field the existing CCM reads.
func cloudIPv4(cip brightbox.CloudIP) string {
	if cip.PublicIPv4 != "" {
		return cip.PublicIPv4
	}
	return cip.PublicIP
}
