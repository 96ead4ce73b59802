package gbsim

import (
	"slices"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

func wantAddrs(t *testing.T, s *Server, name string, want ...string) {
	t.Helper()
	got := s.LookupHost(name)
	if got == nil {
		t.Errorf("LookupHost(%q) = nil, want %v", name, want)
		return
	}
	var gotS []string
	for _, a := range got {
		gotS = append(gotS, a.String())
	}
	if !slices.Equal(gotS, want) {
		t.Errorf("LookupHost(%q) = %v, want %v", name, gotS, want)
	}
}

func wantUnknown(t *testing.T, s *Server, name string) {
	t.Helper()
	if got := s.LookupHost(name); got != nil {
		t.Errorf("LookupHost(%q) = %v, want nil (unknown)", name, got)
	}
}

// TestLookupHostCloudIPs: the names the API hands out for a cloud IP
// resolve to its addresses, as the existing CCM requires before it builds
// a load balancer on it (brightbox-cloud-controller-manager
// brightbox/domain_resolution.go: fqdn and reverse_dns each resolve to
// one of public_ipv4, public_ipv6).
func TestLookupHostCloudIPs(t *testing.T) {
	s, c := setup(t, Options{})
	cip, err := c.CreateCloudIP(ctx(), brightbox.CloudIPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cip.Fqdn, cip.ID+".") || cip.ReverseDNS == "" {
		t.Fatalf("cloud IP names %q %q", cip.Fqdn, cip.ReverseDNS)
	}
	wantAddrs(t, s, cip.Fqdn, cip.PublicIPv4, cip.PublicIPv6)
	wantAddrs(t, s, strings.ToUpper(cip.Fqdn)+".", cip.PublicIPv4, cip.PublicIPv6)
	wantAddrs(t, s, cip.ReverseDNS, cip.PublicIPv4)

	// A reverse DNS name set on the cloud IP replaces the default one.
	oldReverse := cip.ReverseDNS
	if _, err := c.UpdateCloudIP(ctx(), brightbox.CloudIPOptions{ID: cip.ID, ReverseDNS: ptr("www.example.com")}); err != nil {
		t.Fatal(err)
	}
	wantAddrs(t, s, "WWW.example.com.", cip.PublicIPv4)
	wantUnknown(t, s, oldReverse)

	if _, err := c.DestroyCloudIP(ctx(), cip.ID); err != nil {
		t.Fatal(err)
	}
	wantUnknown(t, s, cip.Fqdn)
	wantUnknown(t, s, "www.example.com")
	wantUnknown(t, s, "cip-zzzzz.gb1.brightbox.com")
	wantUnknown(t, s, "")
	wantUnknown(t, s, ".")
}

// TestLookupHostServers: a server's fqdn resolves to its private IPv4
// address, ipv6.<fqdn> to its IPv6 address and public.<fqdn> to its
// cloud IPs'; a server group's names to its members'.
func TestLookupHostServers(t *testing.T) {
	s, c := setup(t, Options{})
	a := s.AddServer(CloudServer{Name: "a"})
	b := s.AddServer(CloudServer{Name: "b"})
	srv, err := c.Server(ctx(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	iface := srv.Interfaces[0]
	if srv.Fqdn != a.ID+".gb1.brightbox.com" {
		t.Fatalf("fqdn = %q", srv.Fqdn)
	}
	wantAddrs(t, s, srv.Fqdn, iface.IPv4Address)
	wantAddrs(t, s, "IPv6."+srv.Fqdn+".", iface.IPv6Address)
	wantAddrs(t, s, "public."+srv.Fqdn) // no cloud IP: known, no address

	cip := s.AddCloudIP(CloudIP{Target: a.ID})
	wantAddrs(t, s, "public."+srv.Fqdn, cip.PublicIPv4)

	g, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr("web")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddServersToServerGroup(ctx(), g.ID, brightbox.ServerGroupMemberList{
		Servers: []brightbox.ServerGroupMember{{Server: a.ID}, {Server: b.ID}}}); err != nil {
		t.Fatal(err)
	}
	wantAddrs(t, s, g.Fqdn, a.IPv4, b.IPv4)
	wantAddrs(t, s, "ipv6."+g.Fqdn, a.IPv6, b.IPv6)
	wantAddrs(t, s, "public."+g.Fqdn, cip.PublicIPv4)

	s.DeleteServer(b.ID)
	wantUnknown(t, s, b.FQDN)
	wantAddrs(t, s, g.Fqdn, a.IPv4)
	wantUnknown(t, s, "srv-zzzzz.gb1.brightbox.com")
	wantUnknown(t, s, "ipv6.srv-zzzzz.gb1.brightbox.com")

	// The other account's names resolve on the same server.
	o := s.OtherAccountServer()
	other := o.Servers()[0]
	wantAddrs(t, s, other.FQDN, other.IPv4)
}
