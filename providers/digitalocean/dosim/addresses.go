package dosim

import (
	"fmt"
	"net/netip"
)

// publicBlocks are /16 blocks of DigitalOcean's own public IPv4 space (as
// its droplets get them, e.g. 104.131.x.x, 159.203.x.x) from which the
// simulator hands out droplets' public addresses: real public space, not
// the shared address space 100.64.0.0/10 nor RFC 1918.
var publicBlocks = [][2]int{
	{104, 131}, {159, 203}, {138, 197}, {167, 99}, {143, 198}, {164, 90},
	{165, 227}, {134, 209}, {157, 245}, {161, 35}, {188, 166}, {206, 189},
	{46, 101}, {128, 199}, {137, 184}, {147, 182}, {174, 138},
}

// Address plan. A droplet's public IPv4 is in a /20 (netmask
// 255.255.240.0, as the API reports for droplets) whose first address is
// its gateway; hostsPerSubnet of each /20 are used, from .2 on, so no
// droplet gets the network, gateway or broadcast address. Its private
// IPv4 is in 10.x.0.0/16, with no gateway (the API gives a private
// interface none).
const (
	publicNetmask  = "255.255.240.0"
	privateNetmask = "255.255.0.0"
	hostsPerSubnet = 4000
	privatePerNet  = 65000
)

// dropletNetworks are the addresses of the n-th droplet (n < 1,000,000):
// a private and a public IPv4 and a public IPv6, distinct for each n.
func dropletNetworks(n int) Networks {
	sub, host := n/hostsPerSubnet, n%hostsPerSubnet+2
	block := publicBlocks[sub/16%len(publicBlocks)]
	third := sub % 16 * 16 // the /20's first third octet
	public := fmt.Sprintf("%d.%d.%d.%d", block[0], block[1], third+host/256, host%256)
	gateway := fmt.Sprintf("%d.%d.%d.1", block[0], block[1], third)
	priv := n%privatePerNet + 2
	private := fmt.Sprintf("10.%d.%d.%d", 10+n/privatePerNet%200, priv/256, priv%256)
	return Networks{
		V4: []NetworkV4{
			{IPAddress: private, Netmask: privateNetmask, Type: "private"},
			{IPAddress: public, Netmask: publicNetmask, Gateway: gateway, Type: "public"},
		},
		V6: []NetworkV6{{IPAddress: fmt.Sprintf("2604:a880:800:10::%x:%x", n/65536, n%65536), Netmask: 64, Gateway: "2604:a880:800:10::1", Type: "public"}},
	}
}

// publicNetwork is the public interface of a droplet given address ip
// (a scenario's publicIPv4): netmask 255.255.240.0 and, as gateway, the
// first address of that /20.
func publicNetwork(ip string) NetworkV4 {
	n := NetworkV4{IPAddress: ip, Netmask: publicNetmask, Type: "public"}
	if a, err := netip.ParseAddr(ip); err == nil && a.Is4() {
		if p, err := a.Prefix(20); err == nil {
			n.Gateway = p.Addr().Next().String()
		}
	}
	return n
}
