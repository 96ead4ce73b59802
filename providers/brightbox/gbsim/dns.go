package gbsim

import (
	"net/netip"
	"strings"
)

// DNS label prefixes Brightbox puts before a server's (or server
// group's) fqdn: ipv6.<fqdn> names its IPv6 address, public.<fqdn> its
// cloud IPs'.
const (
	ipv6Prefix   = "ipv6."
	publicPrefix = "public."
)

// LookupHost returns the addresses a DNS name the cloud hands out
// resolves to, as Brightbox's DNS answers them, for a DNS server to serve
// (cmd/cloudsim --dns): the existing Brightbox CCM resolves a cloud IP's
// fqdn and reverse_dns before it builds a load balancer on it
// (brightbox/domain_resolution.go, ensureLoadBalancerDomainResolution)
// and requires one of the cloud IP's addresses among the answers.
//
//   - a cloud IP's fqdn (cip-xxxxx.gb1.brightbox.com): its public IPv4 and
//     IPv6 addresses; its reverse_dns (cip-a-b-c-d.gb1.brightbox.com, or
//     the name set on it): its public IPv4 address;
//   - a server's fqdn (srv-xxxxx.gb1.brightbox.com): its private IPv4
//     address; ipv6.<fqdn>: its IPv6 address; public.<fqdn>: the public
//     IPv4 addresses of the cloud IPs mapped to it;
//   - a server group's fqdn (grp-xxxxx.gb1.brightbox.com), and ipv6. and
//     public. before it: those of its members, together.
//
// Names are case-insensitive and may end in a dot. A name the cloud did
// not hand out (a deleted server's, an unknown one) is nil; a name it did
// with no address (public.<fqdn> of a server without a cloud IP) is empty,
// not nil. The other account's names (OtherAccountServer) resolve too, as
// Brightbox's DNS serves every account.
func (s *Server) LookupHost(name string) []netip.Addr {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		return nil
	}
	s.mu.Lock()
	addrs := s.st.lookupHost(name)
	s.mu.Unlock()
	if o := s.other.Load(); addrs == nil && o != nil {
		return o.LookupHost(name)
	}
	return addrs
}

// lookupHost is LookupHost for a lower-case name without its final dot.
func (st *state) lookupHost(name string) []netip.Addr {
	for _, c := range st.cips.All() {
		switch name {
		case strings.ToLower(c.FQDN):
			return parseAddrs(c.PublicIPv4, c.PublicIPv6)
		case strings.ToLower(c.ReverseDNS):
			return parseAddrs(c.PublicIPv4)
		}
	}
	base, prefix := name, ""
	for _, p := range []string{ipv6Prefix, publicPrefix} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			base, prefix = rest, p
		}
	}
	if addrs := st.lookupServers(base, prefix); addrs != nil {
		return addrs
	}
	if prefix != "" {
		// A server may be called ipv6.<something> itself.
		return st.lookupServers(name, "")
	}
	return nil
}

// lookupServers resolves base, the name without prefix, as a server's
// fqdn or a server group's.
func (st *state) lookupServers(base, prefix string) []netip.Addr {
	for _, srv := range st.servers.All() {
		if srv.Status != StatusDeleted && strings.ToLower(srv.FQDN) == base {
			return st.serverAddrs(prefix, srv)
		}
	}
	for _, g := range st.groups.All() {
		if groupFQDN(g) != base {
			continue
		}
		out := []netip.Addr{}
		for _, id := range g.Servers {
			if srv, ok := st.servers.Get(id); ok && srv.Status != StatusDeleted {
				out = append(out, st.serverAddrs(prefix, srv)...)
			}
		}
		return out
	}
	return nil
}

// serverAddrs are the addresses of prefix+srv's fqdn.
func (st *state) serverAddrs(prefix string, srv *CloudServer) []netip.Addr {
	switch prefix {
	case ipv6Prefix:
		return parseAddrs(srv.IPv6)
	case publicPrefix:
		out := []netip.Addr{}
		for _, c := range st.cips.All() {
			if c.Target != "" && c.Target == srv.Interface {
				out = append(out, parseAddrs(c.PublicIPv4)...)
			}
		}
		return out
	}
	return parseAddrs(srv.IPv4)
}

// groupFQDN is a server group's fqdn, as the API shows it.
func groupFQDN(g *ServerGroup) string { return g.ID + ".gb1.brightbox.com" }

// parseAddrs parses the addresses among ips, skipping "", "none" and
// anything else that is not one; never nil.
func parseAddrs(ips ...string) []netip.Addr {
	out := []netip.Addr{}
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			out = append(out, a)
		}
	}
	return out
}
