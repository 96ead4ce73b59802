package skeletonsim

import (
	"encoding/binary"
	"net/netip"
)

// Addresses LaunchInstance hands out: host h (1, 2, ...) gets 10.0.0.<h+1>,
// 2001:db8::<h+1> and a public IPv4 from the three documentation networks
// of RFC 5737, .2 to .254 of each in turn, so the first 759 instances have
// distinct public addresses (later ones repeat them).
var (
	privateIPv4Base = netip.MustParseAddr("10.0.0.1")
	publicIPv6Base  = netip.MustParseAddr("2001:db8::1")
	publicIPv4Nets  = []netip.Addr{
		netip.MustParseAddr("203.0.113.0"),
		netip.MustParseAddr("198.51.100.0"),
		netip.MustParseAddr("192.0.2.0"),
	}
)

const hostsPerPublicNet = 253 // .2 to .254; .1 is the gateway

// hostAddresses returns the addresses of host h, from 1.
func hostAddresses(h int) (privateIPv4, publicIPv4, publicIPv6 netip.Addr) {
	i := (h - 1) % (hostsPerPublicNet * len(publicIPv4Nets))
	public := addrAdd(publicIPv4Nets[i/hostsPerPublicNet], uint64(i%hostsPerPublicNet+2))
	return addrAdd(privateIPv4Base, uint64(h)), public, addrAdd(publicIPv6Base, uint64(h))
}

// addrAdd returns a+n, wrapping within the low 32 bits (IPv4) or 64 bits
// (IPv6).
func addrAdd(a netip.Addr, n uint64) netip.Addr {
	if a.Is4() {
		b := a.As4()
		binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+uint32(n))
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	binary.BigEndian.PutUint64(b[8:], binary.BigEndian.Uint64(b[8:])+n)
	return netip.AddrFrom16(b)
}
