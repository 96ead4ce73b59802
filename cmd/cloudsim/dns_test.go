package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// names is a hostResolver of fixed names.
type names map[string][]netip.Addr

func (n names) LookupHost(name string) []netip.Addr { return n[strings.ToLower(name)] }

// resolverFor is Go's own resolver (the one a Go client such as the
// Brightbox CCM uses) asking only the DNS server at addr, over network
// ("udp" or "tcp").
func resolverFor(addr, network string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

func TestDNSAnswersTheSimulatorsNames(t *testing.T) {
	sim := names{
		"cip-3ihnu.gb1.brightbox.com": {netip.MustParseAddr("109.107.39.1")},
		"srv-lv426.gb1.brightbox.com": {netip.MustParseAddr("10.240.0.1"), netip.MustParseAddr("2a02:1348:17c::1")},
	}
	addr, failed, stop, err := serveDNS("127.0.0.1:0", sim, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	for _, network := range []string{"udp", "tcp"} {
		r := resolverFor(addr, network)
		got, err := r.LookupNetIP(t.Context(), "ip", "cip-3ihnu.gb1.brightbox.com")
		if err != nil || !slices.Equal(got, sim["cip-3ihnu.gb1.brightbox.com"]) {
			t.Errorf("%s: cloud IP name = %v, %v", network, got, err)
		}
		got, err = r.LookupNetIP(t.Context(), "ip", "SRV-LV426.gb1.brightbox.com.")
		want := sim["srv-lv426.gb1.brightbox.com"]
		slices.SortFunc(got, netip.Addr.Compare)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: server name (A and AAAA) = %v, %v; want %v", network, got, err, want)
		}
		got, err = r.LookupNetIP(t.Context(), "ip6", "cip-3ihnu.gb1.brightbox.com")
		if len(got) != 0 || err == nil {
			t.Errorf("%s: AAAA of an IPv4-only name = %v, %v; want no address", network, got, err)
		}
		_, err = r.LookupNetIP(t.Context(), "ip", "cip-never.gb1.brightbox.com")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: a name the simulator never handed out: %v, want not found (NXDOMAIN)", network, err)
		}
	}
	select {
	case err := <-failed:
		t.Errorf("the DNS server ended: %v", err)
	default:
	}
}

func TestDNSListensOnlyOnLoopback(t *testing.T) {
	if _, _, _, err := serveDNS("0.0.0.0:0", names{}, io.Discard); err == nil || !strings.Contains(err.Error(), "--dns") {
		t.Errorf("serveDNS on 0.0.0.0 = %v, want an error naming --dns", err)
	}
}
