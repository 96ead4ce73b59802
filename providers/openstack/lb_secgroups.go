package openstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file holds the Neutron calls of [LoadBalancer]
// manage-security-groups: the Service's group and its rules (see
// lb_secgroup_rules.go), and its place on the member nodes' ports (see
// lb_secgroup_ports.go). Neutron calls leave the load balancer ACTIVE, so
// they share a sync with an Octavia write. A sync that changes nothing
// reads the group, its rules and the ports that carry it, and writes
// nothing.

// secGroupAPI is the Neutron API of one region, for node security groups.
type secGroupAPI struct {
	net *gophercloud.ServiceClient
	// ovn: the provider keeps the clients' source addresses.
	ovn bool

	mu sync.Mutex
	// cidrs caches subnet CIDRs by subnet ID (Neutron cannot change them).
	cidrs map[string]netip.Prefix
}

// sgTarget is the security group one Service asks for.
type sgTarget struct {
	svc         *corev1.Service
	clusterName string
	members     []sgMember
	// subnetID is the member subnet: its CIDR is the rules' source, and
	// the group goes on the node ports with an address on it.
	subnetID string
}

// ensure brings the Service's security group in line: it creates it if
// missing, creates and deletes rules that differ, and puts it on the
// member nodes' ports (and takes it off the others). It reports whether
// it wrote anything.
func (g *secGroupAPI) ensure(ctx context.Context, t sgTarget) (bool, error) {
	if t.subnetID == "" {
		return false, errors.New("no member subnet for the security group rules: set [LoadBalancer] member-subnet-id")
	}
	cidr, err := g.subnetCIDR(ctx, t.subnetID)
	if err != nil {
		return false, err
	}
	want, err := desiredSGRules(t.svc, cidr, g.ovn)
	if err != nil {
		return false, err
	}
	name := secGroupName(t.svc)
	found, err := g.listGroups(ctx, name)
	if err != nil {
		return false, err
	}
	var (
		sg      *groups.SecGroup
		have    []rules.SecGroupRule
		changed bool
	)
	switch len(found) {
	case 0:
		opts := groups.CreateOpts{Name: name, Description: secGroupDescription(t.clusterName, t.svc)}
		if sg, err = groups.Create(lbOp(ctx, "security-groups.create"), g.net, opts).Extract(); err != nil {
			return false, fmt.Errorf("creating security group %s: %w", name, cloud.ServiceError(err))
		}
		klog.FromContext(ctx).Info("Created security group", "service", klog.KObj(t.svc), "securityGroupID", sg.ID)
		have, changed = sg.Rules, true
	case 1:
		sg = &found[0]
		if have, err = g.listRules(ctx, sg.ID); err != nil {
			return false, err
		}
	default:
		return false, fmt.Errorf("security groups %s and %s are both named %q: delete one", found[0].ID, found[1].ID, name)
	}
	create, del := planSGRules(want, have)
	for _, r := range create {
		if err := g.createRule(ctx, sg.ID, r); err != nil {
			return changed, err
		}
		changed = true
	}
	for _, r := range del {
		if err := g.deleteRule(ctx, r); err != nil {
			return changed, err
		}
		changed = true
	}
	if len(create)+len(del) > 0 {
		klog.FromContext(ctx).Info("Updated security group rules", "service", klog.KObj(t.svc), "securityGroupID", sg.ID,
			"created", len(create), "deleted", len(del))
	}
	attached, err := g.attach(ctx, sg.ID, t.members, t.subnetID)
	return changed || attached, err
}

// remove takes the Service's security group off every port and deletes
// it; a group already gone is success.
func (g *secGroupAPI) remove(ctx context.Context, svc *corev1.Service) error {
	found, err := g.listGroups(ctx, secGroupName(svc))
	if err != nil {
		return err
	}
	for _, sg := range found {
		if err := g.detachAll(ctx, sg.ID); err != nil {
			return err
		}
		err := groups.Delete(lbOp(ctx, "security-groups.delete"), g.net, sg.ID).ExtractErr()
		switch {
		case err == nil:
			klog.FromContext(ctx).Info("Deleted security group", "service", klog.KObj(svc), "securityGroupID", sg.ID)
		case cloud.IsAPINotFound(err):
		case neutronErrorType(err) == "SecurityGroupInUse":
			return fmt.Errorf("security group %s is still on a port (another port took it meanwhile?); retrying: %w", sg.ID, cloud.ServiceError(err))
		default:
			return fmt.Errorf("deleting security group %s: %w", sg.ID, cloud.ServiceError(err))
		}
	}
	return nil
}

// listGroups lists the security groups named name.
func (g *secGroupAPI) listGroups(ctx context.Context, name string) ([]groups.SecGroup, error) {
	pages, err := groups.List(g.net, groups.ListOpts{Name: name}).AllPages(lbOp(ctx, "security-groups.list"))
	if err != nil {
		return nil, fmt.Errorf("listing security groups named %q: %w", name, cloud.ServiceError(err))
	}
	all, err := groups.ExtractGroups(pages)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sg := range all {
		if sg.Name == name {
			out = append(out, sg)
		}
	}
	return out, nil
}

func (g *secGroupAPI) listRules(ctx context.Context, groupID string) ([]rules.SecGroupRule, error) {
	pages, err := rules.List(g.net, rules.ListOpts{SecGroupID: groupID}).AllPages(lbOp(ctx, "security-group-rules.list"))
	if err != nil {
		return nil, fmt.Errorf("listing the rules of security group %s: %w", groupID, cloud.ServiceError(err))
	}
	return rules.ExtractRules(pages)
}

// createRule adds r to the group; a rule that already exists (a
// concurrent sync made it) is success.
func (g *secGroupAPI) createRule(ctx context.Context, groupID string, r sgRule) error {
	_, err := rules.Create(lbOp(ctx, "security-group-rules.create"), g.net, r.createOpts(groupID)).Extract()
	if err != nil && neutronErrorType(err) != "SecurityGroupRuleExists" {
		return fmt.Errorf("adding rule %s to security group %s: %w", r, groupID, cloud.ServiceError(err))
	}
	return nil
}

// deleteRule deletes a rule; already gone is success.
func (g *secGroupAPI) deleteRule(ctx context.Context, r rules.SecGroupRule) error {
	err := rules.Delete(lbOp(ctx, "security-group-rules.delete"), g.net, r.ID).ExtractErr()
	if err != nil && !cloud.IsAPINotFound(err) {
		return fmt.Errorf("deleting rule %s of security group %s: %w", r.ID, r.SecGroupID, cloud.ServiceError(err))
	}
	return nil
}

// subnetCIDR is the CIDR of subnet id, read once.
func (g *secGroupAPI) subnetCIDR(ctx context.Context, id string) (netip.Prefix, error) {
	g.mu.Lock()
	cidr, ok := g.cidrs[id]
	g.mu.Unlock()
	if ok {
		return cidr, nil
	}
	s, err := subnets.Get(lbOp(ctx, "subnets.get"), g.net, id).Extract()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("reading member subnet %s for the security group rules: %w", id, cloud.ServiceError(err))
	}
	if cidr, err = netip.ParsePrefix(s.CIDR); err != nil {
		return netip.Prefix{}, fmt.Errorf("member subnet %s: CIDR %q: %w", id, s.CIDR, err)
	}
	g.mu.Lock()
	if g.cidrs == nil {
		g.cidrs = map[string]netip.Prefix{}
	}
	g.cidrs[id] = cidr
	g.mu.Unlock()
	return cidr, nil
}

// neutronErrorType is the type of a Neutron error answer
// ({"NeutronError": {"type": ...}}), "" for anything else.
func neutronErrorType(err error) string {
	var code gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &code) || code.Actual < http.StatusBadRequest {
		return ""
	}
	var body struct {
		NeutronError struct {
			Type string `json:"type"`
		} `json:"NeutronError"`
	}
	if json.Unmarshal(code.Body, &body) != nil {
		return ""
	}
	return body.NeutronError.Type
}
