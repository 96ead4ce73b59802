package brightbox

import (
	"context"
	"fmt"
	"slices"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// Each load balancer has a server group holding its nodes and a firewall
// policy on that group, both named as the load balancer, whose one rule
// opens the node ports to the load balancers, as the existing CCM makes
// them. The policy is made first and then applied to the group, so that
// the group is always found through its policy (lb_names.go).

// ensureFirewall makes the server group hold exactly the Service's nodes
// and its firewall policy open exactly its node ports, creating either
// when missing. With nothing to change it reads the group and the policy
// (by ID once known: lb_names.go) and writes nothing. It reports whether it wrote.
func (d *lbDriver) ensureFirewall(ctx context.Context, req *lbRequest) (bool, error) {
	fp, err := d.firewallPolicyNamed(ctx, req.Name)
	if err != nil {
		return false, err
	}
	created := fp == nil
	if created {
		name := req.Name
		fp, err = d.client.CreateFirewallPolicy(cloudapi.WithOperation(ctx, "firewall_policies.create"), brightbox.FirewallPolicyOptions{Name: &name})
		if err != nil {
			return false, fmt.Errorf("creating firewall policy %q: %w", req.Name, err)
		}
		if fp == nil || fp.ID == "" {
			return true, fmt.Errorf("creating firewall policy %q: malformed response: no policy", req.Name)
		}
		d.policies.set(req.Name, fp.ID)
	}
	group, wrote, err := d.ensureServerGroup(ctx, req, fp, created)
	wrote = wrote || created
	if err != nil {
		return wrote, err
	}
	if fp.ServerGroup == nil || fp.ServerGroup.ID != group.ID {
		if _, err := one(ctx, "firewall_policies.apply_to", func(ctx context.Context) (*brightbox.FirewallPolicy, error) {
			return d.client.ApplyFirewallPolicy(ctx, fp.ID, brightbox.FirewallPolicyAttachment{ServerGroup: group.ID})
		}); err != nil {
			return wrote, fmt.Errorf("applying firewall policy %s to server group %s: %w", fp.ID, group.ID, err)
		}
		wrote = true
	}
	ruleWrote, err := d.ensureRule(ctx, fp, desiredRule(req.Service, req.Name))
	return wrote || ruleWrote, err
}

// ensureServerGroup returns the load balancer's server group, created when
// missing, holding exactly the Service's nodes. fp is the load balancer's
// firewall policy, created by this sync when fresh.
func (d *lbDriver) ensureServerGroup(ctx context.Context, req *lbRequest, fp *brightbox.FirewallPolicy, fresh bool) (*brightbox.ServerGroup, bool, error) {
	group, err := d.serverGroupOf(ctx, req.Name, fp, fresh)
	if err != nil {
		return nil, false, err
	}
	wrote := false
	if group == nil {
		name := req.Name
		group, err = d.client.CreateServerGroup(cloudapi.WithOperation(ctx, "server_groups.create"), brightbox.ServerGroupOptions{Name: &name})
		if err != nil {
			return nil, false, fmt.Errorf("creating server group %q: %w", req.Name, err)
		}
		if group == nil || group.ID == "" {
			return nil, true, fmt.Errorf("creating server group %q: malformed response: no group", req.Name)
		}
		d.groups.set(req.Name, group.ID)
		wrote = true
	}
	add, remove := membership(nodeIDs(group.Servers), d.serverIDs(ctx, req))
	for _, change := range []struct {
		op  string
		ids []string
		do  func(context.Context, string, brightbox.ServerGroupMemberList) (*brightbox.ServerGroup, error)
	}{{"add_servers", add, d.client.AddServersToServerGroup}, {"remove_servers", remove, d.client.RemoveServersFromServerGroup}} {
		write := func(ids []string) error {
			klog.FromContext(ctx).V(2).Info("Updating the load balancer's server group", "service", klog.KObj(req.Service), "serverGroup", group.ID, change.op, ids)
			_, err := one(ctx, "server_groups."+change.op, func(ctx context.Context) (*brightbox.ServerGroup, error) {
				return change.do(ctx, group.ID, members(ids))
			})
			return err
		}
		if len(change.ids) == 0 {
			continue
		}
		err := write(change.ids)
		if err != nil && change.op == "add_servers" && refusedAsInvalid(err) && d.leaveOutGone(ctx, change.ids) {
			ids := d.gone.without(change.ids)
			if len(ids) == 0 {
				continue
			}
			err = write(ids)
		}
		if err != nil {
			return nil, wrote, fmt.Errorf("server group %s: %s: %w", group.ID, change.op, err)
		}
		wrote = true
	}
	return group, wrote, nil
}

// serverIDs are the servers of req's nodes, less those known to be gone.
func (d *lbDriver) serverIDs(ctx context.Context, req *lbRequest) []string {
	return d.gone.without(serverIDs(ctx, req.Nodes, d.codec))
}

func members(ids []string) brightbox.ServerGroupMemberList {
	l := brightbox.ServerGroupMemberList{Servers: make([]brightbox.ServerGroupMember, len(ids))}
	for i, id := range ids {
		l.Servers[i].Server = id
	}
	return l
}

// ensureRule makes the policy's first rule the desired one: created when
// the policy has none, updated when it differs.
func (d *lbDriver) ensureRule(ctx context.Context, fp *brightbox.FirewallPolicy, want firewallRule) (bool, error) {
	if len(fp.Rules) == 0 {
		if _, err := d.client.CreateFirewallRule(cloudapi.WithOperation(ctx, "firewall_rules.create"), want.options(fp.ID)); err != nil {
			return false, fmt.Errorf("creating the rule of firewall policy %s: %w", fp.ID, err)
		}
		return true, nil
	}
	have := &fp.Rules[0]
	changes := ruleChanges(have, want)
	if len(changes) == 0 {
		return false, nil
	}
	klog.FromContext(ctx).V(2).Info("Updating firewall rule", "firewallRule", have.ID, "changes", changes)
	opts := want.options("")
	opts.ID = have.ID
	if _, err := one(ctx, "firewall_rules.update", func(ctx context.Context) (*brightbox.FirewallRule, error) {
		return d.client.UpdateFirewallRule(ctx, opts)
	}); err != nil {
		return false, fmt.Errorf("updating firewall rule %s: %w", have.ID, err)
	}
	return true, nil
}

// deleteFirewall deletes the firewall policy and the server group named
// as the load balancer (emptied first); missing ones are already deleted.
// The group is found as a sync finds it (lb_names.go): by the ID known,
// through its policy, or by a list only when a policy was left without
// its group.
func (d *lbDriver) deleteFirewall(ctx context.Context, req *lbRequest) error {
	groupIDs := []string{}
	if id, ok := d.groups.get(req.Name); ok {
		groupIDs = append(groupIDs, id)
	}
	d.policies.forget(req.Name)
	d.groups.forget(req.Name)
	policies, err := d.client.FirewallPolicies(cloudapi.WithOperation(ctx, "firewall_policies.list"))
	if err != nil {
		return fmt.Errorf("listing firewall policies: %w", err)
	}
	orphaned := false
	for _, fp := range policies {
		if fp.Name != req.Name {
			continue
		}
		if fp.ServerGroup != nil && fp.ServerGroup.ID != "" {
			groupIDs = append(groupIDs, fp.ServerGroup.ID)
		} else {
			orphaned = true
		}
		if _, err := one(ctx, "firewall_policies.delete", func(ctx context.Context) (*brightbox.FirewallPolicy, error) {
			return d.client.DestroyFirewallPolicy(ctx, fp.ID)
		}); err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting firewall policy %s: %w", fp.ID, err)
		}
	}
	slices.Sort(groupIDs)
	for _, id := range slices.Compact(groupIDs) {
		g, err := one(ctx, "server_groups.get", func(ctx context.Context) (*brightbox.ServerGroup, error) {
			return d.client.ServerGroup(ctx, id)
		})
		switch {
		case isNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("getting server group %s: %w", id, err)
		case g == nil || g.ID != id:
			return fmt.Errorf("getting server group %s: malformed response: no group", id)
		case g.Name != req.Name:
			continue
		}
		if err := d.deleteServerGroup(ctx, g); err != nil {
			return err
		}
	}
	if !orphaned {
		return nil
	}
	groups, err := d.client.ServerGroups(cloudapi.WithOperation(ctx, "server_groups.list"))
	if err != nil {
		return fmt.Errorf("listing server groups: %w", err)
	}
	for _, g := range groups {
		if g.Name != req.Name {
			continue
		}
		if err := d.deleteServerGroup(ctx, &g); err != nil {
			return err
		}
	}
	return nil
}

func (d *lbDriver) deleteServerGroup(ctx context.Context, g *brightbox.ServerGroup) error {
	if ids := nodeIDs(g.Servers); len(ids) > 0 {
		if _, err := one(ctx, "server_groups.remove_servers", func(ctx context.Context) (*brightbox.ServerGroup, error) {
			return d.client.RemoveServersFromServerGroup(ctx, g.ID, members(ids))
		}); err != nil {
			if isNotFound(err) {
				return nil
			}
			return fmt.Errorf("emptying server group %s: %w", g.ID, err)
		}
	}
	if _, err := one(ctx, "server_groups.delete", func(ctx context.Context) (*brightbox.ServerGroup, error) {
		return d.client.DestroyServerGroup(ctx, g.ID)
	}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting server group %s: %w", g.ID, err)
	}
	return nil
}
