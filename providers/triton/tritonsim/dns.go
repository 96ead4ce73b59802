package tritonsim

import (
	"net/netip"
	"strings"
)

// LookupHost returns the addresses of a name the simulator hands out, for
// a DNS server in front of it (cmd/cloudsim's): a CNS instance or service
// name, as Resolve answers it (the machines' addresses in that zone), and,
// while CMON is served, CMON's name cmon.<public zone> and its per-machine
// names <machine>.cmon.<public zone>, on the loopback address it listens
// on. nil for any other name, or one with no live records.
func (s *Server) LookupHost(name string) []netip.Addr {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	cmonHost := "cmon." + strings.ToLower(s.opts.CNSPublicZone)
	if s.CMONURL() != "" && (name == cmonHost || strings.HasSuffix(name, "."+cmonHost)) {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	}
	var out []netip.Addr
	for _, a := range s.Resolve(name) {
		if addr, err := netip.ParseAddr(a); err == nil {
			out = append(out, addr)
		}
	}
	return out
}
