// Package nodeaddr builds the status.addresses of a Node from what a cloud
// reports about an instance.
//
// A [Builder] collects addresses and [Builder.Build] returns them normalised,
// deduplicated, filtered by address family and in a stable order:
//
//  1. InternalIP, IPv4 then IPv6
//  2. ExternalIP, IPv4 then IPv6
//  3. InternalDNS
//  4. ExternalDNS
//  5. Hostname
//
// Within one type and family, addresses keep the order in which they were
// added. That order is the cloud's and it matters: Kubernetes takes the first
// InternalIP of each family (else the first ExternalIP) as the Node's IPs, so
// a provider must add the primary NIC's address first. Sorting by value would
// make the node IP of a multi-NIC instance depend on address arithmetic.
//
// IPs are written in canonical form (IPv6 compressed, IPv4-mapped IPv6
// unmapped); the same type and address pair is kept once, while one IP may
// appear as both InternalIP and ExternalIP, as with upstream
// [k8s.io/cloud-provider/node/helpers.AddToNodeAddresses].
package nodeaddr

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Family selects which IP families a Node advertises.
type Family string

// Address families. The zero Family means DualStack.
const (
	IPv4      Family = "ipv4"
	IPv6      Family = "ipv6"
	DualStack Family = "dual"
)

// ParseFamily parses a family as written in configuration: "ipv4", "ipv6",
// "dual" or "dualstack", in any case. The empty string means DualStack.
func ParseFamily(s string) (Family, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ipv4":
		return IPv4, nil
	case "ipv6":
		return IPv6, nil
	case "", "dual", "dualstack", "dual-stack":
		return DualStack, nil
	}
	return "", fmt.Errorf("unknown address family %q: want ipv4, ipv6 or dualstack", s)
}

func (f Family) allows(ip netip.Addr) bool {
	switch f {
	case IPv4:
		return ip.Is4()
	case IPv6:
		return ip.Is6()
	}
	return true
}

// Builder collects a Node's addresses. The zero Builder is ready to use and
// keeps both families. A Builder is not safe for concurrent use.
type Builder struct {
	family Family
	addrs  []address
	errs   []error
}

type address struct {
	corev1.NodeAddress
	rank int // position in the documented order
}

// Ranks of the documented order.
const (
	rankInternalIPv4 = iota
	rankInternalIPv6
	rankExternalIPv4
	rankExternalIPv6
	rankInternalDNS
	rankExternalDNS
	rankHostname
)

// NewBuilder returns a Builder that keeps the IPs of family f. An unknown
// family keeps both families and makes Build return an error.
func NewBuilder(f Family) *Builder {
	b := &Builder{family: f}
	if _, err := ParseFamily(string(f)); err != nil {
		b.family = DualStack
		b.errs = append(b.errs, err)
	}
	return b
}

// AddInternal adds InternalIPs. Empty strings are ignored; invalid IPs are
// reported by Build.
func (b *Builder) AddInternal(ips ...string) *Builder {
	return b.addIPs(corev1.NodeInternalIP, rankInternalIPv4, ips)
}

// AddExternal adds ExternalIPs. Empty strings are ignored; invalid IPs are
// reported by Build.
func (b *Builder) AddExternal(ips ...string) *Builder {
	return b.addIPs(corev1.NodeExternalIP, rankExternalIPv4, ips)
}

// AddHostname adds the Hostname address. An empty name is ignored.
func (b *Builder) AddHostname(name string) *Builder {
	return b.addName(corev1.NodeHostName, rankHostname, name)
}

// AddDNS adds an InternalDNS or ExternalDNS name. An empty name is ignored;
// any other kind is reported by Build.
func (b *Builder) AddDNS(kind corev1.NodeAddressType, name string) *Builder {
	switch kind {
	case corev1.NodeInternalDNS:
		return b.addName(kind, rankInternalDNS, name)
	case corev1.NodeExternalDNS:
		return b.addName(kind, rankExternalDNS, name)
	}
	b.errs = append(b.errs, fmt.Errorf("address %q: type %q is not %s or %s",
		name, kind, corev1.NodeInternalDNS, corev1.NodeExternalDNS))
	return b
}

// addIPs adds ips as kind; rank4 is the rank of kind's IPv4 addresses and
// rank4+1 that of its IPv6 addresses.
func (b *Builder) addIPs(kind corev1.NodeAddressType, rank4 int, ips []string) *Builder {
	for _, s := range ips {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		ip, err := netip.ParseAddr(s)
		switch {
		case err != nil:
			b.errs = append(b.errs, fmt.Errorf("invalid %s %q", kind, s))
			continue
		case ip.Zone() != "":
			b.errs = append(b.errs, fmt.Errorf("invalid %s %q: zone not allowed", kind, s))
			continue
		}
		ip = ip.Unmap()
		if !b.family.allows(ip) {
			continue
		}
		rank := rank4
		if ip.Is6() {
			rank++
		}
		b.add(kind, rank, ip.String())
	}
	return b
}

func (b *Builder) addName(kind corev1.NodeAddressType, rank int, name string) *Builder {
	if name = strings.TrimSpace(name); name != "" {
		b.add(kind, rank, name)
	}
	return b
}

func (b *Builder) add(kind corev1.NodeAddressType, rank int, addr string) {
	b.addrs = append(b.addrs, address{
		NodeAddress: corev1.NodeAddress{Type: kind, Address: addr},
		rank:        rank,
	})
}

// Build returns the addresses in the documented order, or nil if there are
// none. The error joins every invalid input; the valid addresses are returned
// alongside it so that a caller may choose to use them.
func (b *Builder) Build() ([]corev1.NodeAddress, error) {
	sorted := slices.Clone(b.addrs)
	slices.SortStableFunc(sorted, func(x, y address) int { return x.rank - y.rank })

	var out []corev1.NodeAddress
	seen := make(map[corev1.NodeAddress]bool, len(sorted))
	for _, a := range sorted {
		if !seen[a.NodeAddress] {
			seen[a.NodeAddress] = true
			out = append(out, a.NodeAddress)
		}
	}
	return out, errors.Join(b.errs...)
}
