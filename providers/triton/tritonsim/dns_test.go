package tritonsim

import (
	"net/netip"
	"slices"
	"testing"
)

// TestLookupHost: a DNS server in front of the simulator answers the CNS
// names it hands out as CNS would (the machines' addresses in the name's
// zone; triton-cns docs), and CMON's name, cmon.<public zone> and the
// per-machine <uuid>.cmon.<public zone>, with the loopback address CMON
// listens on while it is served; nil for any other name.
func TestLookupHost(t *testing.T) {
	s := NewServer(t, Options{})
	nodes := cnsNodes(s)
	acct := s.AccountID()
	addrs := func(ips ...string) []netip.Addr {
		var out []netip.Addr
		for _, ip := range sorted(ips...) {
			out = append(out, netip.MustParseAddr(ip))
		}
		return out
	}
	loopback := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	for name, want := range map[string][]netip.Addr{
		"k8s-c1-nodes.svc." + acct + ".us-east-1.cns.joyent.com.":   addrs(nodes[0].NICs[1].IP, nodes[1].NICs[1].IP, nodes[2].NICs[1].IP),
		"W1.inst." + acct + ".us-east-1.triton.zone":                addrs(nodes[0].NICs[0].IP),
		nodes[2].ID + ".inst." + acct + ".us-east-1.cns.joyent.com": addrs(nodes[2].NICs[1].IP),
		"cmon.us-east-1.triton.zone":                                loopback,
		nodes[0].ID + ".cmon.us-east-1.triton.zone":                 loopback,
		"nobody.inst." + acct + ".us-east-1.triton.zone":            nil,
		"example.com": nil,
	} {
		if got := s.LookupHost(name); !slices.Equal(got, want) {
			t.Errorf("LookupHost(%q) = %v, want %v", name, got, want)
		}
	}
	s.DeleteMachine(nodes[0].ID)
	if got := s.LookupHost("w1.inst." + acct + ".us-east-1.triton.zone"); got != nil {
		t.Errorf("a deleted machine's name resolves to %v", got)
	}
	if got := New(Options{}).LookupHost("cmon.us-east-1.triton.zone"); got != nil {
		t.Errorf("CMON's name resolves to %v while CMON is not served", got)
	}
}
