package main

import (
	"context"
	"net"
	"net/http"
	"slices"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/cloudipstatus"
	"github.com/brightbox/gobrightbox/v2/enums/mode"
	"github.com/brightbox/gobrightbox/v2/enums/transportprotocol"
)

// cloudIPs creates a cloud IP, changes it, maps it to a server and back,
// and destroys it.
func (r *run) cloudIPs() error {
	cip, err := r.c.CreateCloudIP(r.ctx, brightbox.CloudIPOptions{Name: ptr("fidelity")})
	if err != nil {
		return err
	}
	if err := r.expect(cip.Status == cloudipstatus.Unmapped && cip.Mode == mode.Nat && cip.PublicIPv4 != "" &&
		cip.PublicIPv6 != "" && cip.Fqdn != "" && cip.ReverseDNS != "", "created cloud IP = %+v", cip); err != nil {
		return err
	}
	if err := r.resolves(cip); err != nil {
		return err
	}
	cip, err = r.c.UpdateCloudIP(r.ctx, brightbox.CloudIPOptions{ID: cip.ID, Name: ptr("fidelity-2"),
		PortTranslators: []brightbox.PortTranslator{{Incoming: 443, Outgoing: 8443, Protocol: transportprotocol.Tcp}}})
	if err != nil {
		return err
	}
	if err := r.expect(cip.Name == "fidelity-2" && len(cip.PortTranslators) == 1 && cip.PortTranslators[0].Outgoing == 8443,
		"updated cloud IP = %+v", cip); err != nil {
		return err
	}
	if _, err = r.c.MapCloudIP(r.ctx, cip.ID, brightbox.CloudIPAttachment{Destination: r.node.ID}); err != nil {
		return err
	}
	srv, err := r.c.Server(r.ctx, r.node.ID)
	if err != nil {
		return err
	}
	if err := r.expect(slices.ContainsFunc(srv.CloudIPs, func(c brightbox.CloudIP) bool { return c.ID == cip.ID }),
		"server's cloud IPs %+v lack %s", srv.CloudIPs, cip.ID); err != nil {
		return err
	}
	if cip, err = r.c.CloudIP(r.ctx, cip.ID); err != nil {
		return err
	}
	if err := r.expect(cip.Status == cloudipstatus.Mapped && cip.Server != nil && cip.Server.ID == r.node.ID &&
		cip.Interface != nil, "mapped cloud IP = %+v", cip); err != nil {
		return err
	}
	_, err = r.c.DestroyCloudIP(r.ctx, cip.ID)
	if err := r.expectStatus(err, http.StatusConflict, "destroy a mapped cloud IP"); err != nil {
		return err
	}
	if cip, err = r.c.UnMapCloudIP(r.ctx, cip.ID); err != nil {
		return err
	}
	if err := r.expect(cip.Status == cloudipstatus.Unmapped && cip.Server == nil, "unmapped cloud IP = %+v", cip); err != nil {
		return err
	}
	if _, err := r.c.DestroyCloudIP(r.ctx, cip.ID); err != nil {
		return err
	}
	_, err = r.c.CloudIP(r.ctx, cip.ID)
	return r.expectStatus(err, http.StatusNotFound, "destroyed cloud IP")
}

// resolves checks, when cmd/cloudsim answers DNS (CLOUDSIM_DNS), that the
// cloud IP's fqdn and reverse DNS name resolve to one of its addresses, as
// the existing CCM requires before it builds a load balancer on it
// (brightbox/domain_resolution.go).
func (r *run) resolves(cip *brightbox.CloudIP) error {
	server := r.env.dns
	if server == "" {
		return nil
	}
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		return d.DialContext(ctx, network, server)
	}}
	for _, name := range []string{cip.Fqdn, cip.ReverseDNS} {
		ips, err := res.LookupIP(r.ctx, "ip", name)
		if err != nil {
			return err
		}
		match := slices.ContainsFunc(ips, func(ip net.IP) bool {
			return ip.Equal(net.ParseIP(cip.PublicIPv4)) || ip.Equal(net.ParseIP(cip.PublicIPv6))
		})
		if err := r.expect(match, "%s resolves to %v, not to %s or %s", name, ips, cip.PublicIPv4, cip.PublicIPv6); err != nil {
			return err
		}
	}
	return nil
}
