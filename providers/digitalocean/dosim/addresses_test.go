package dosim

import (
	"net/netip"
	"testing"
)

// TestDropletAddresses: a droplet's public IPv4 is in public space (not
// the shared address space 100.64.0.0/10, not RFC 1918), with its gateway
// on its own subnet as the netmask draws it; its private IPv4 is in
// 10.0.0.0/8 with no gateway (openapi
// specification/resources/droplets/models/network_v4.yml: "For private
// interfaces, a gateway is not provided"). Every droplet's are its own.
func TestDropletAddresses(t *testing.T) {
	shared := netip.MustParsePrefix("100.64.0.0/10")
	ten := netip.MustParsePrefix("10.0.0.0/8")
	seen := map[string]int{}
	for _, n := range []int{1, 2, 255, 256, 3999, 4000, 4001, 63999, 64000, 65535, 65536, 500_000, 999_999} {
		nets := dropletNetworks(n)
		for _, v4 := range nets.V4 {
			ip := netip.MustParseAddr(v4.IPAddress)
			if prev, dup := seen[v4.IPAddress]; dup {
				t.Errorf("n=%d: %s also given to n=%d", n, ip, prev)
			}
			seen[v4.IPAddress] = n
			switch v4.Type {
			case "public":
				mask := netip.MustParseAddr(v4.Netmask).AsSlice()
				bits := 0
				for _, b := range mask {
					for ; b != 0; b <<= 1 {
						bits++
					}
				}
				subnet := netip.PrefixFrom(ip, bits).Masked()
				gw := netip.MustParseAddr(v4.Gateway)
				if shared.Contains(ip) || ip.IsPrivate() || !ip.IsGlobalUnicast() || !subnet.Contains(gw) || gw == ip ||
					ip == subnet.Addr() {
					t.Errorf("n=%d: public %s/%s gateway %s", n, ip, v4.Netmask, gw)
				}
			case "private":
				if !ten.Contains(ip) || v4.Gateway != "" {
					t.Errorf("n=%d: private %s gateway %q", n, ip, v4.Gateway)
				}
			}
		}
	}
	if got := publicNetwork("159.203.37.9"); got.Gateway != "159.203.32.1" || got.Netmask != publicNetmask {
		t.Errorf("a scenario's public address: %+v", got)
	}
}
