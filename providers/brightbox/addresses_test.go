package brightbox

import (
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// server is a server with a private IPv4 and a public IPv6 on its
// interface and one cloud IP, as the API reports one.
func server() *brightbox.Server {
	return &brightbox.Server{
		ID: "srv-lv426", Hostname: "srv-lv426", Fqdn: "srv-lv426.gb1.brightbox.com",
		Interfaces: []brightbox.Interface{{ID: "int-ds42k", IPv4Address: "10.240.0.2", IPv6Address: "2a02:1348:17c:2::1"}},
		CloudIPs: []brightbox.CloudIP{{
			ID: "cip-k4a25", PublicIP: "109.107.37.1", PublicIPv4: "109.107.37.1", PublicIPv6: "2a02:1348:ffff:ffff::6d6b:2501",
			Fqdn: "cip-k4a25.gb1.brightbox.com",
		}},
	}
}

func TestNodeAddresses(t *testing.T) {
	got, err := nodeAddresses(server(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.240.0.2"},
		{Type: corev1.NodeExternalIP, Address: "109.107.37.1"},
		{Type: corev1.NodeExternalIP, Address: "2a02:1348:17c:2::1"},
		{Type: corev1.NodeExternalIP, Address: "2a02:1348:ffff:ffff::6d6b:2501"},
		{Type: corev1.NodeExternalDNS, Address: "cip-k4a25.gb1.brightbox.com"},
		{Type: corev1.NodeExternalDNS, Address: "srv-lv426.gb1.brightbox.com"},
		{Type: corev1.NodeHostName, Address: "srv-lv426"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
}

// TestLegacyNodeAddresses pins the existing CCM's list
// (nodeAddressesFromServer), in its order.
func TestLegacyNodeAddresses(t *testing.T) {
	got, err := nodeAddresses(server(), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "srv-lv426"},
		{Type: corev1.NodeExternalDNS, Address: "srv-lv426.gb1.brightbox.com"},
		{Type: corev1.NodeExternalIP, Address: "10.240.0.2"},
		{Type: corev1.NodeExternalIP, Address: "2a02:1348:17c:2::1"},
		{Type: corev1.NodeExternalIP, Address: "109.107.37.1"},
		{Type: corev1.NodeExternalDNS, Address: "cip-k4a25.gb1.brightbox.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("legacy addresses (-want +got):\n%s", diff)
	}
}

// TestMalformedAddresses: a garbled IP is left out and named, the other
// addresses stay, in both modes.
func TestMalformedAddresses(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		full, _ := nodeAddresses(server(), legacy)
		s := server()
		s.Interfaces[0].IPv4Address = "10.240.0.999"
		got, err := nodeAddresses(s, legacy)
		if err == nil {
			t.Errorf("legacy=%v: no error for a malformed IPv4", legacy)
		}
		for _, a := range got {
			if a.Address == "10.240.0.999" {
				t.Errorf("legacy=%v: the malformed IPv4 is an address", legacy)
			}
		}
		if len(got) != len(full)-1 {
			t.Errorf("legacy=%v: %d addresses, want the %d others: %v", legacy, len(got), len(full)-1, got)
		}
	}
}

func TestRegionOfZone(t *testing.T) {
	for zone, want := range map[string]string{"gb1-a": "gb1", "gb1s-b": "gb1s", "us-east-1": "us-east"} {
		if got, err := regionOfZone(zone); err != nil || got != want {
			t.Errorf("regionOfZone(%q) = %q, %v; want %q", zone, got, err, want)
		}
	}
	for _, bad := range []string{"", "gb1", "-a"} {
		if got, err := regionOfZone(bad); err == nil {
			t.Errorf("regionOfZone(%q) = %q, want an error", bad, got)
		}
	}
}
