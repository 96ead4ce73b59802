package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file puts a Service's security group on the Neutron ports of its
// member nodes, as OCCM does: the port of the node's member address (on
// the member subnet), keeping the port's other groups. Unlike OCCM, it
// also takes the group off the ports of nodes that are no longer members.

// portsPerList caps the device IDs of one port list, to keep URLs short.
const portsPerList = 40

// sgMember is a member node, as its security group needs it.
type sgMember struct {
	node     string
	serverID string // "" when the Node has no providerID yet
	addr     string // the member address
}

// sgMembers are the nodes the load balancer has members on, with the
// address of the VIP's family.
func sgMembers(nodes []nodeAddrs, ipv6 bool) []sgMember {
	out := make([]sgMember, 0, len(nodes))
	for _, n := range nodes {
		if addr := memberAddress(n.addrs, ipv6); addr != "" {
			out = append(out, sgMember{node: n.name, serverID: n.serverID, addr: addr})
		}
	}
	return out
}

// sgPort is what the CCM reads of a Neutron port.
type sgPort struct {
	ID             string     `json:"id"`
	DeviceID       string     `json:"device_id"`
	FixedIPs       []ports.IP `json:"fixed_ips"`
	SecurityGroups []string   `json:"security_groups"`
	// PortSecurityEnabled is nil without the port-security extension.
	PortSecurityEnabled *bool `json:"port_security_enabled"`
	RevisionNumber      int   `json:"revision_number"`
}

// serves reports whether p is m's port on the member subnet.
func (p *sgPort) serves(m sgMember, subnetID string) bool {
	if m.serverID != "" && p.DeviceID != m.serverID {
		return false
	}
	return slices.ContainsFunc(p.FixedIPs, func(ip ports.IP) bool {
		return normalizeIP(ip.IPAddress) == m.addr && (subnetID == "" || ip.SubnetID == subnetID)
	})
}

// devicePorts lists the ports of several servers in one call: Neutron
// matches any of a filter's values.
type devicePorts []string

func (d devicePorts) ToPortListQuery() (string, error) {
	return "?" + url.Values{"device_id": d}.Encode(), nil
}

// attach puts group groupID on the member ports and takes it off the
// other ports that carry it. The ports that carry it answer for the
// members they serve; the others are looked up by device (or address).
// A port without port security cannot carry a group and is left alone.
func (g *secGroupAPI) attach(ctx context.Context, groupID string, members []sgMember, subnetID string) (bool, error) {
	log := klog.FromContext(ctx)
	have, err := g.portsWith(ctx, groupID)
	if err != nil {
		return false, err
	}
	want := map[string]*sgPort{}
	var missing []sgMember
	for _, m := range members {
		if i := slices.IndexFunc(have, func(p sgPort) bool { return p.serves(m, subnetID) }); i >= 0 {
			want[have[i].ID] = &have[i]
		} else {
			missing = append(missing, m)
		}
	}
	found, err := g.memberPorts(ctx, missing, subnetID)
	if err != nil {
		return false, err
	}
	changed := false
	var errs []error
	for _, p := range found {
		if p.PortSecurityEnabled != nil && !*p.PortSecurityEnabled {
			log.V(2).Info("Port security is off: not adding the security group", "port", p.ID, "securityGroupID", groupID)
			continue
		}
		want[p.ID] = p
		if slices.Contains(p.SecurityGroups, groupID) {
			continue
		}
		if err := g.setGroups(ctx, p, append(slices.Clone(p.SecurityGroups), groupID)); err != nil {
			errs = append(errs, err)
			continue
		}
		changed = true
	}
	for i := range have {
		p := &have[i]
		if want[p.ID] != nil {
			continue
		}
		if err := g.setGroups(ctx, p, without(p.SecurityGroups, groupID)); err != nil {
			errs = append(errs, err)
			continue
		}
		changed = true
	}
	if changed {
		log.Info("Updated the ports of security group", "securityGroupID", groupID, "members", len(members))
	}
	return changed, errors.Join(errs...)
}

// detachAll takes group groupID off every port that carries it.
func (g *secGroupAPI) detachAll(ctx context.Context, groupID string) error {
	have, err := g.portsWith(ctx, groupID)
	if err != nil {
		return err
	}
	var errs []error
	for i := range have {
		errs = append(errs, g.setGroups(ctx, &have[i], without(have[i].SecurityGroups, groupID)))
	}
	return errors.Join(errs...)
}

// portsWith lists the ports that carry group groupID.
func (g *secGroupAPI) portsWith(ctx context.Context, groupID string) ([]sgPort, error) {
	list, err := g.listPorts(ctx, ports.ListOpts{SecurityGroups: []string{groupID}})
	if err != nil {
		return nil, fmt.Errorf("listing the ports of security group %s: %w", groupID, err)
	}
	// A Neutron without port filtering by security group ignores the filter.
	return slices.DeleteFunc(list, func(p sgPort) bool { return !slices.Contains(p.SecurityGroups, groupID) }), nil
}

// memberPorts finds the ports of members: by server ID, several servers
// per call, else by address. A member without a port is left out (its
// server is going away); a port found twice counts once.
func (g *secGroupAPI) memberPorts(ctx context.Context, members []sgMember, subnetID string) ([]*sgPort, error) {
	var servers []string
	var candidates []sgPort
	for _, m := range members {
		if m.serverID != "" {
			servers = append(servers, m.serverID)
			continue
		}
		list, err := g.listPorts(ctx, ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{IPAddress: m.addr}}})
		if err != nil {
			return nil, fmt.Errorf("finding the port of node %s: %w", m.node, err)
		}
		candidates = append(candidates, list...)
	}
	for chunk := range slices.Chunk(servers, portsPerList) {
		list, err := g.listPorts(ctx, devicePorts(chunk))
		if err != nil {
			return nil, fmt.Errorf("finding the ports of %d nodes: %w", len(chunk), err)
		}
		candidates = append(candidates, list...)
	}
	var out []*sgPort
	for _, m := range members {
		i := slices.IndexFunc(candidates, func(p sgPort) bool { return p.serves(m, subnetID) })
		switch {
		case i < 0:
			klog.FromContext(ctx).V(2).Info("No port with the node's member address: not adding the security group", "node", m.node, "address", m.addr)
		case !slices.ContainsFunc(out, func(p *sgPort) bool { return p.ID == candidates[i].ID }):
			out = append(out, &candidates[i])
		}
	}
	return out, nil
}

func (g *secGroupAPI) listPorts(ctx context.Context, opts ports.ListOptsBuilder) ([]sgPort, error) {
	pages, err := ports.List(g.net, opts).AllPages(lbOp(ctx, "ports.list"))
	if err != nil {
		return nil, cloud.ServiceError(err)
	}
	var out []sgPort
	if err := ports.ExtractPortsInto(pages, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// setGroups replaces the port's security groups, if the port has not
// changed since it was read (a concurrent change is retried on the next
// sync rather than lost). A port gone meanwhile is success.
func (g *secGroupAPI) setGroups(ctx context.Context, p *sgPort, groups []string) error {
	opts := ports.UpdateOpts{SecurityGroups: &groups}
	if p.RevisionNumber > 0 {
		opts.RevisionNumber = &p.RevisionNumber
	}
	_, err := ports.Update(lbOp(ctx, "ports.update"), g.net, p.ID, opts).Extract()
	if err != nil && !cloud.IsAPINotFound(err) {
		return fmt.Errorf("setting the security groups of port %s: %w", p.ID, cloud.ServiceError(err))
	}
	return nil
}

// without is list without s, never nil (null would not clear the list).
func without(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
