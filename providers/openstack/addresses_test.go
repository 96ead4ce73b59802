package openstack

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// TestNovaAddressOrder: the networks come out in the order Nova wrote them
// (its interface order), not sorted.
func TestNovaAddressOrder(t *testing.T) {
	var s server
	if err := json.Unmarshal([]byte(`{"id": "s1", "addresses": {
		"zeta": [{"addr": "10.1.0.5", "version": 4, "OS-EXT-IPS:type": "fixed"}],
		"alpha": [{"addr": "10.2.0.5", "version": 4, "OS-EXT-IPS:type": "fixed"},
		          {"addr": "203.0.113.9", "version": 4, "OS-EXT-IPS:type": "floating"}]}}`), &s); err != nil {
		t.Fatal(err)
	}
	want := novaAddresses{
		{Name: "zeta", Addrs: []novaAddress{{Addr: "10.1.0.5", Version: 4, Type: "fixed"}}},
		{Name: "alpha", Addrs: []novaAddress{{Addr: "10.2.0.5", Version: 4, Type: "fixed"}, {Addr: "203.0.113.9", Version: 4, Type: "floating"}}},
	}
	if diff := cmp.Diff(want, s.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"addresses": []}`, `{"addresses": {"n": "x"}}`,
		`{"addresses": {"n": [{}]}}`, `{"addresses": {"n": [{"version": 4, "OS-EXT-IPS:type": "fixed"}]}}`,
		`{"addresses": {"n": [{"addr": "10.0.0.2", "version": 4}]}}`,
		`{"addresses": {"n": [{"addr": "10.0.0.2", "version": 4, "OS-EXT-IPS:type": "FIXED"}]}}`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if err := json.Unmarshal([]byte(`{"addresses": null}`), &s); err != nil || s.Addresses != nil {
		t.Errorf("null addresses: %v, %v", s.Addresses, err)
	}
}

func TestNodeAddresses(t *testing.T) {
	fixed := func(ip string) novaAddress { return novaAddress{Addr: ip, Type: "fixed"} }
	floating := func(ip string) novaAddress { return novaAddress{Addr: ip, Type: "floating"} }
	multiNIC := &server{
		AccessIPv4: "198.51.100.7",
		AccessIPv6: "2001:db8::7",
		Metadata:   map[string]string{"hostname": "node-1.example.com"},
		Addresses: novaAddresses{
			{Name: "private-b", Addrs: []novaAddress{fixed("10.2.0.5"), fixed("fd00:2::5"), floating("203.0.113.9")}},
			{Name: "private-a", Addrs: []novaAddress{fixed("10.1.0.5")}},
			{Name: "public", Addrs: []novaAddress{fixed("192.0.2.10"), fixed("2001:db8:1::10")}},
		},
	}
	addr := func(t corev1.NodeAddressType, a string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: t, Address: a}
	}
	in, ex, host := corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName
	tests := []struct {
		name string
		net  NetworkingSection
		want []corev1.NodeAddress
	}{
		{
			name: "no settings: every fixed address internal, in interface order",
			want: []corev1.NodeAddress{
				addr(in, "10.2.0.5"), addr(in, "10.1.0.5"), addr(in, "192.0.2.10"),
				addr(in, "fd00:2::5"), addr(in, "2001:db8:1::10"),
				addr(ex, "198.51.100.7"), addr(ex, "203.0.113.9"), addr(ex, "2001:db8::7"),
				addr(host, "node-1.example.com"),
			},
		},
		{
			name: "public and internal networks",
			net:  NetworkingSection{PublicNetworkName: []string{"public"}, InternalNetworkName: []string{"private-a"}},
			want: []corev1.NodeAddress{
				addr(in, "10.1.0.5"),
				addr(ex, "198.51.100.7"), addr(ex, "203.0.113.9"), addr(ex, "192.0.2.10"),
				addr(ex, "2001:db8::7"), addr(ex, "2001:db8:1::10"),
				addr(host, "node-1.example.com"),
			},
		},
		{
			name: "IPv6 disabled",
			net:  NetworkingSection{IPv6SupportDisabled: true, PublicNetworkName: []string{"public"}},
			want: []corev1.NodeAddress{
				addr(in, "10.2.0.5"), addr(in, "10.1.0.5"),
				addr(ex, "198.51.100.7"), addr(ex, "203.0.113.9"), addr(ex, "192.0.2.10"),
				addr(host, "node-1.example.com"),
			},
		},
		{
			name: "address-sort-order",
			net:  NetworkingSection{AddressSortOrder: "10.1.0.0/16, 192.0.2.0/24, 2001:db8::/32"},
			want: []corev1.NodeAddress{
				addr(in, "10.1.0.5"), addr(in, "192.0.2.10"), addr(in, "10.2.0.5"),
				addr(in, "2001:db8:1::10"), addr(in, "fd00:2::5"),
				addr(ex, "198.51.100.7"), addr(ex, "203.0.113.9"), addr(ex, "2001:db8::7"),
				addr(host, "node-1.example.com"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := newAddressRules(&tt.net)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nodeAddresses(multiNIC, rules)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSortAddresses(t *testing.T) {
	order, err := cloud.ParseSortOrder("10.0.0.0/8,192.168.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	got := sortAddresses([]string{"172.16.0.1", "192.168.1.1", "10.0.0.9", "junk", "10.0.0.2", "192.168.0.1"}, order)
	want := []string{"10.0.0.2", "10.0.0.9", "192.168.0.1", "192.168.1.1", "172.16.0.1", "junk"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNameFilter(t *testing.T) {
	for _, name := range []string{"node-1", "node.1", "a+b", "x(1)", "[abc]", `back\slash`, "^$|*?{}"} {
		f := nameFilter(name)
		re := regexp.MustCompile(f)
		if !re.MatchString(name) || !re.MatchString(strings.ToUpper(name)) {
			t.Errorf("filter %q does not match %q in both cases", f, name)
		}
		for _, other := range []string{"x" + name, name + "x", "node-10", "nodex1"} {
			if other != name && re.MatchString(other) {
				t.Errorf("filter %q matches %q", f, other)
			}
		}
	}
	if got := nameFilter("Node.1"); got != `^[nN][oO][dD][eE]\.1$` {
		t.Errorf("nameFilter = %q", got)
	}
}
