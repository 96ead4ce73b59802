package main

import (
	"slices"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/serverstatus"
)

// reads reads the account, its zones, server types and servers, as the
// existing CCM's node controllers do, and picks the active server the
// rest builds on.
func (r *run) reads() error {
	acc, err := r.c.Account(r.ctx, r.env.account)
	if err != nil {
		return err
	}
	if err := r.expect(acc.ID == r.env.account && acc.Status.String() != "", "account = %+v", acc); err != nil {
		return err
	}
	zones, err := r.c.Zones(r.ctx)
	if err != nil {
		return err
	}
	if err := r.expect(len(zones) > 0 && slices.ContainsFunc(zones, func(z brightbox.Zone) bool { return strings.Contains(z.Handle, "-") }),
		"zones = %+v, want handles like gb1-a (the CCM cuts the region at the last -)", zones); err != nil {
		return err
	}
	zone, err := r.c.ZoneByHandle(r.ctx, zones[0].Handle)
	if err != nil {
		return err
	}
	if err := r.expect(zone.ID == zones[0].ID, "zone by handle %s = %s", zones[0].Handle, zone.ID); err != nil {
		return err
	}
	types, err := r.c.ServerTypes(r.ctx)
	if err != nil {
		return err
	}
	if err := r.expect(len(types) > 0, "no server types"); err != nil {
		return err
	}
	if _, err := r.c.ServerTypeByHandle(r.ctx, types[0].Handle); err != nil {
		return err
	}
	servers, err := r.c.Servers(r.ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(servers, func(s brightbox.Server) bool { return s.Status == serverstatus.Active })
	if err := r.expect(i >= 0, "no active server among %d", len(servers)); err != nil {
		return err
	}
	srv, err := r.c.Server(r.ctx, servers[i].ID)
	if err != nil {
		return err
	}
	if err := r.expect(srv.ID == servers[i].ID && srv.Zone != nil && srv.ServerType != nil && len(srv.Interfaces) == 1 &&
		srv.Fqdn != "" && srv.Interfaces[0].IPv4Address != "", "server = %+v", srv); err != nil {
		return err
	}
	iface, err := r.c.Interface(r.ctx, srv.Interfaces[0].ID)
	if err != nil {
		return err
	}
	r.node = srv
	return r.expect(iface.Server != nil && iface.Server.ID == srv.ID && iface.IPv4Address == srv.Interfaces[0].IPv4Address,
		"interface %s = %+v", srv.Interfaces[0].ID, iface)
}
