package openstack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/nodeaddr"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// novaNetwork is one network of a server's "addresses" and the server's
// addresses on it, in the order Nova lists them.
type novaNetwork struct {
	Name  string
	Addrs []novaAddress
}

type novaAddress struct {
	Addr    string `json:"addr"`
	Version int    `json:"version"`
	Type    string `json:"OS-EXT-IPS:type"` // addrFixed or addrFloating
}

// The types of a Nova address.
const (
	addrFixed    = "fixed"
	addrFloating = "floating"
)

// validate rejects an address Nova never lists: one without an IP or
// whose addr is no IP (left out, the server's routes would read as
// blackholes), or of a type other than fixed or floating (which would turn
// a floating address into an InternalIP).
func (a novaAddress) validate() error {
	_, ipErr := netip.ParseAddr(a.Addr)
	switch {
	case a.Addr == "":
		return errors.New(`an address without "addr"`)
	case ipErr != nil:
		return fmt.Errorf("address %q is no IP", a.Addr)
	case a.Type != addrFixed && a.Type != addrFloating:
		return fmt.Errorf("address %s: OS-EXT-IPS:type %q is neither %q nor %q", a.Addr, a.Type, addrFixed, addrFloating)
	}
	return nil
}

// novaAddresses is a server's "addresses" object with its key order kept.
// Nova writes the networks in the order of the server's interfaces, so the
// first network is the primary NIC's. A Go map would lose that order and
// make the first InternalIP of a multi-NIC server depend on map iteration
// or network names.
type novaAddresses []novaNetwork

// UnmarshalJSON reads the object {"<network>": [address, ...], ...} in
// order.
func (a *novaAddresses) UnmarshalJSON(data []byte) error {
	*a = nil
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("addresses: want an object of networks")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("addresses: %w", err)
		}
		name, _ := tok.(string)
		var addrs []novaAddress
		if err := dec.Decode(&addrs); err != nil {
			return fmt.Errorf("addresses of network %q: %w", name, err)
		}
		if len(addrs) == 0 {
			// Nova lists a network because the server has an address
			// on it.
			return fmt.Errorf("addresses of network %q: none", name)
		}
		for _, addr := range addrs {
			if err := addr.validate(); err != nil {
				return fmt.Errorf("addresses of network %q: %w", name, err)
			}
		}
		*a = append(*a, novaNetwork{Name: name, Addrs: addrs})
	}
	_, err := dec.Token() // the closing brace
	return err
}

// addressRules is [Networking], parsed.
type addressRules struct {
	family    nodeaddr.Family
	public    []string // network names whose fixed addresses are ExternalIPs
	internal  []string // when set, the only networks whose fixed addresses count
	sortOrder []netip.Prefix
}

func newAddressRules(n *NetworkingSection) (addressRules, error) {
	order, err := cloud.ParseSortOrder(n.AddressSortOrder)
	if err != nil {
		return addressRules{}, err
	}
	r := addressRules{family: nodeaddr.DualStack, public: n.PublicNetworkName, internal: n.InternalNetworkName, sortOrder: order}
	if n.IPv6SupportDisabled {
		r.family = nodeaddr.IPv4
	}
	return r, nil
}

// nodeAddresses returns a server's Node addresses, following OCCM's rules:
//
//   - a floating address, and any address on a public-network-name
//     network, is an ExternalIP, as are accessIPv4 and accessIPv6;
//   - a fixed address is an InternalIP, unless internal-network-name is set
//     and its network is not listed: then it is left out;
//   - IPv6 addresses are left out with ipv6-support-disabled;
//   - the metadata key "hostname" is the Hostname.
//
// The order is deterministic: InternalIPs, then ExternalIPs (IPv4 before
// IPv6 within each, see package nodeaddr), each in Nova's interface order,
// so the primary NIC's address comes first; then address-sort-order groups
// the addresses of each type by the first CIDR they fall in, first CIDR
// first, sorted by value within a CIDR, leaving the rest where they were.
func nodeAddresses(s *server, r addressRules) ([]corev1.NodeAddress, error) {
	var internal, external []string
	external = append(external, s.AccessIPv4, s.AccessIPv6)
	for _, n := range s.Addresses {
		for _, a := range n.Addrs {
			switch {
			case a.Type == addrFloating, slices.Contains(r.public, n.Name):
				external = append(external, a.Addr)
			case len(r.internal) == 0 || slices.Contains(r.internal, n.Name):
				internal = append(internal, a.Addr)
			}
		}
	}
	return nodeaddr.NewBuilder(r.family).
		AddInternal(sortAddresses(internal, r.sortOrder)...).
		AddExternal(sortAddresses(external, r.sortOrder)...).
		AddHostname(s.Metadata["hostname"]).
		Build()
}

// sortAddresses applies address-sort-order as OCCM does: a stable sort by
// the index of the first CIDR an address falls in (addresses in no CIDR
// keep their place after those that are), by value within one CIDR.
func sortAddresses(addrs []string, order []netip.Prefix) []string {
	if len(order) == 0 {
		return addrs
	}
	rank := func(s string) (int, netip.Addr) {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return len(order), ip
		}
		ip = ip.Unmap()
		for i, p := range order {
			if p.Contains(ip) {
				return i, ip
			}
		}
		return len(order), ip
	}
	out := slices.Clone(addrs)
	slices.SortStableFunc(out, func(a, b string) int {
		ra, ipa := rank(a)
		rb, ipb := rank(b)
		if ra != rb {
			return ra - rb
		}
		if ra == len(order) {
			return 0 // unranked: keep the cloud's order
		}
		return ipa.Compare(ipb)
	})
	return out
}
