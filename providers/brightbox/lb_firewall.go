package brightbox

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// The load balancers' nodes are in the cluster's shared server group, and
// their node ports opened by the shared firewall policy, one rule each:
// lb_shared.go says why and how they are found.

// ensureFirewall puts req's nodes in the shared server group and req's
// rule in the shared firewall policy, creating either when missing, and
// moves req's load balancer off a group and policy of its own (the
// existing CCM's). With nothing to change it writes nothing, and reads
// nothing while what the driver knows of the shared group and policy is
// fresh (lb_shared.go). It reports whether it wrote.
func (d *lbDriver) ensureFirewall(ctx context.Context, req *lbRequest) (wrote bool, err error) {
	s := &d.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if err != nil {
			s.forget()
		}
	}()
	name := sharedName(req.ClusterName)
	if err := d.loadShared(ctx, name); err != nil {
		return false, err
	}
	if s.policyID == "" {
		if err := d.createSharedPolicy(ctx, name, req.ClusterName); err != nil {
			return false, err
		}
		wrote = true
	}
	if s.groupID == "" {
		if err := d.createSharedGroup(ctx, name, req.ClusterName); err != nil {
			return true, err
		}
		wrote = true
	}
	changed, err := d.ensureSharedMembers(ctx, req)
	wrote = wrote || changed
	if err != nil {
		return wrote, err
	}
	if !s.applied {
		if _, err := one(ctx, "firewall_policies.apply_to", func(ctx context.Context) (*brightbox.FirewallPolicy, error) {
			return d.client.ApplyFirewallPolicy(ctx, s.policyID, brightbox.FirewallPolicyAttachment{ServerGroup: s.groupID})
		}); err != nil {
			return wrote, fmt.Errorf("applying firewall policy %s to server group %s: %w", s.policyID, s.groupID, err)
		}
		s.applied, wrote = true, true
	}
	changed, err = d.ensureRule(ctx, req)
	wrote = wrote || changed
	if err != nil || !s.own[req.Name] {
		return wrote, err
	}
	// The load balancer's own group and policy go only now that the
	// shared ones open its node ports on its nodes: no outage.
	if err := d.deleteOwnFirewall(ctx, req.Name); err != nil {
		return true, fmt.Errorf("moving to the shared server group %s: %w", s.groupID, err)
	}
	delete(s.own, req.Name)
	klog.FromContext(ctx).Info("Moved the load balancer's nodes to the shared server group; deleted its own server group and firewall policy",
		"service", klog.KObj(req.Service), "serverGroup", s.groupID, "firewallPolicy", s.policyID)
	return true, nil
}

// createSharedPolicy creates the shared firewall policy, applied to no
// group yet. Called with d.shared.mu held, as the others below.
func (d *lbDriver) createSharedPolicy(ctx context.Context, name, clusterName string) error {
	desc := "Opens the node ports of cluster " + clusterName + "'s load balancers (ccmkit)"
	fp, err := d.client.CreateFirewallPolicy(cloudapi.WithOperation(ctx, "firewall_policies.create"), brightbox.FirewallPolicyOptions{Name: &name, Description: &desc})
	if err != nil {
		return fmt.Errorf("creating firewall policy %q: %w", name, err)
	}
	if fp == nil || fp.ID == "" {
		return fmt.Errorf("creating firewall policy %q: malformed response: no policy", name)
	}
	s := &d.shared
	s.policyID, s.rules, s.groupID, s.applied, s.servers = fp.ID, nil, "", false, nil
	return nil
}

// createSharedGroup creates the shared server group, empty.
func (d *lbDriver) createSharedGroup(ctx context.Context, name, clusterName string) error {
	desc := "Nodes of cluster " + clusterName + "'s load balancers (ccmkit)"
	g, err := d.client.CreateServerGroup(cloudapi.WithOperation(ctx, "server_groups.create"), brightbox.ServerGroupOptions{Name: &name, Description: &desc})
	if err != nil {
		return fmt.Errorf("creating server group %q: %w", name, err)
	}
	if g == nil || g.ID == "" {
		return fmt.Errorf("creating server group %q: malformed response: no group", name)
	}
	s := &d.shared
	s.groupID, s.applied, s.servers = g.ID, false, nil
	return nil
}

// ensureSharedMembers makes the shared group hold exactly req's nodes. A
// write the API refuses as a conflict (a server already in the group, or
// no longer: a deleted server leaves its groups) means the group changed
// since it was read: it is read again and the change made once more.
func (d *lbDriver) ensureSharedMembers(ctx context.Context, req *lbRequest) (bool, error) {
	s := &d.shared
	want := d.serverIDs(ctx, req)
	wrote := false
	for retried := false; ; retried = true {
		w, err := d.changeMembers(ctx, req, want)
		wrote = wrote || w
		if err == nil || retried || apiStatus(err) != http.StatusConflict {
			return wrote, err
		}
		g, gerr := d.serverGroupByID(ctx, s.groupID, s.name)
		switch {
		case gerr != nil:
			return wrote, gerr
		case g == nil:
			return wrote, err
		}
		s.servers = sortedIDs(g.Servers)
	}
}

// changeMembers adds to the shared group the servers of want it lacks and
// removes those want lacks, as d.shared knows it. A server the API
// refuses to add is looked up (lb_gone.go) and left out if gone; one
// known to be gone has left the group already (the API takes a deleted
// server out of its groups).
func (d *lbDriver) changeMembers(ctx context.Context, req *lbRequest, want []string) (bool, error) {
	s := &d.shared
	s.servers = d.gone.without(s.servers)
	add, remove := membership(s.servers, want)
	wrote := false
	for _, change := range []struct {
		op  string
		ids []string
		do  func(context.Context, string, brightbox.ServerGroupMemberList) (*brightbox.ServerGroup, error)
	}{{"add_servers", add, d.client.AddServersToServerGroup}, {"remove_servers", remove, d.client.RemoveServersFromServerGroup}} {
		write := func(ids []string) error {
			klog.FromContext(ctx).V(2).Info("Updating the load balancers' server group", "service", klog.KObj(req.Service), "serverGroup", s.groupID, change.op, ids)
			_, err := one(ctx, "server_groups."+change.op, func(ctx context.Context) (*brightbox.ServerGroup, error) {
				return change.do(ctx, s.groupID, members(ids))
			})
			return err
		}
		ids := change.ids
		if len(ids) == 0 {
			continue
		}
		err := write(ids)
		if err != nil && change.op == "add_servers" && refusedAsInvalid(err) && d.leaveOutGone(ctx, ids) {
			if ids = d.gone.without(ids); len(ids) == 0 {
				continue
			}
			err = write(ids)
		}
		if err != nil {
			return wrote, fmt.Errorf("server group %s: %s: %w", s.groupID, change.op, err)
		}
		wrote = true
		if change.op == "add_servers" {
			s.servers = append(s.servers, ids...)
			slices.Sort(s.servers)
		} else {
			s.servers = without(s.servers, ids)
		}
	}
	return wrote, nil
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

// ensureRule makes req's rule in the shared policy, the first described
// with its load balancer's name, the desired one: created when there is
// none, updated when it differs. Others so described (a create whose
// answer was lost and that was made again) are deleted.
func (d *lbDriver) ensureRule(ctx context.Context, req *lbRequest) (bool, error) {
	s := &d.shared
	want := desiredRule(req.Service, req.Name)
	mine := ruleIndexes(s.rules, req.Name)
	if len(mine) == 0 {
		r, err := d.client.CreateFirewallRule(cloudapi.WithOperation(ctx, "firewall_rules.create"), want.options(s.policyID))
		if err != nil {
			return false, fmt.Errorf("creating the rule of load balancer %q in firewall policy %s: %w", req.Name, s.policyID, err)
		}
		if r == nil || r.ID == "" {
			return true, fmt.Errorf("creating the rule of load balancer %q in firewall policy %s: malformed response: no rule", req.Name, s.policyID)
		}
		s.rules = append(s.rules, want.rule(r.ID))
		return true, nil
	}
	wrote := false
	have := &s.rules[mine[0]]
	if changes := ruleChanges(have, want); len(changes) > 0 {
		klog.FromContext(ctx).V(2).Info("Updating firewall rule", "service", klog.KObj(req.Service), "firewallRule", have.ID, "changes", changes)
		opts := want.options("")
		opts.ID = have.ID
		if _, err := one(ctx, "firewall_rules.update", func(ctx context.Context) (*brightbox.FirewallRule, error) {
			return d.client.UpdateFirewallRule(ctx, opts)
		}); err != nil {
			return false, fmt.Errorf("updating firewall rule %s: %w", have.ID, err)
		}
		*have = want.rule(have.ID)
		wrote = true
	}
	extra := make(map[string]bool, len(mine)-1)
	for _, i := range mine[1:] {
		if err := d.deleteRule(ctx, s.rules[i].ID); err != nil {
			return wrote, err
		}
		extra[s.rules[i].ID], wrote = true, true
	}
	s.rules = slices.DeleteFunc(s.rules, func(r brightbox.FirewallRule) bool { return extra[r.ID] })
	return wrote, nil
}

// ruleIndexes returns the indexes of the rules described with name.
func ruleIndexes(rules []brightbox.FirewallRule, name string) []int {
	var out []int
	for i := range rules {
		if rules[i].Description == name {
			out = append(out, i)
		}
	}
	return out
}

// deleteRule deletes a firewall rule; one already gone is deleted.
func (d *lbDriver) deleteRule(ctx context.Context, id string) error {
	if _, err := one(ctx, "firewall_rules.delete", func(ctx context.Context) (*brightbox.FirewallRule, error) {
		return d.client.DestroyFirewallRule(ctx, id)
	}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting firewall rule %s: %w", id, err)
	}
	return nil
}

// deleteFirewall takes req's load balancer out of the firewall: its rule
// in the shared policy goes (and, when it was the last, the shared group
// and policy), and so do a group and a policy of its own, named as it
// (the existing CCM's, not moved yet). Missing ones are already deleted.
// It works from what the driver knows of the shared policy (read at most
// once per ttl, as for ensureFirewall), so deleting N load balancers does
// not read a policy that holds up to N rules N times.
func (d *lbDriver) deleteFirewall(ctx context.Context, req *lbRequest) (err error) {
	s := &d.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if err != nil {
			s.forget()
		}
	}()
	if err := d.loadShared(ctx, sharedName(req.ClusterName)); err != nil {
		return err
	}
	if s.own[req.Name] {
		if err := d.deleteOwnFirewall(ctx, req.Name); err != nil {
			return err
		}
		delete(s.own, req.Name)
	}
	return d.leaveShared(ctx, req)
}

// leaveShared deletes req's rules from the shared policy. When no rule is
// left, the last load balancer is gone, and the shared group, then the
// policy, are deleted; as every load balancer relies on them, that is
// decided on the policy read again, not on what the driver knew. Called
// with d.shared.mu held and the shared group and policy loaded.
func (d *lbDriver) leaveShared(ctx context.Context, req *lbRequest) error {
	s := &d.shared
	if err := d.dropRules(ctx, req.Name); err != nil || s.policyID == "" || len(s.rules) > 0 {
		return err
	}
	s.forget()
	if err := d.loadShared(ctx, s.name); err != nil {
		return err
	}
	if err := d.dropRules(ctx, req.Name); err != nil || s.policyID == "" || len(s.rules) > 0 {
		return err
	}
	if s.groupID != "" {
		if err := d.deleteServerGroup(ctx, s.groupID, s.servers); err != nil {
			return err
		}
	}
	if _, err := one(ctx, "firewall_policies.delete", func(ctx context.Context) (*brightbox.FirewallPolicy, error) {
		return d.client.DestroyFirewallPolicy(ctx, s.policyID)
	}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting firewall policy %s: %w", s.policyID, err)
	}
	klog.FromContext(ctx).Info("Deleted the load balancers' shared server group and firewall policy: no load balancer is left", "firewallPolicy", s.policyID)
	// Known: there is neither now (a later sync of a deleted Service
	// needs no read to find so).
	s.policyID, s.groupID, s.applied, s.servers, s.rules = "", "", false, nil, nil
	return nil
}

// dropRules deletes the rules of the shared policy described with name,
// and takes them out of what the driver knows.
func (d *lbDriver) dropRules(ctx context.Context, name string) error {
	s := &d.shared
	for _, i := range ruleIndexes(s.rules, name) {
		if err := d.deleteRule(ctx, s.rules[i].ID); err != nil {
			return err
		}
	}
	s.rules = slices.DeleteFunc(s.rules, func(r brightbox.FirewallRule) bool { return r.Description == name })
	return nil
}

// deleteOwnFirewall deletes the firewall policies called name and their
// server groups, also called name (emptied first): a load balancer's own,
// as the existing CCM makes them, which the shared state (lb_shared.go)
// says exist. A group is found through its policy; only a policy applied
// to no group (the existing CCM stopped midway) lists the groups, to find
// one called name.
func (d *lbDriver) deleteOwnFirewall(ctx context.Context, name string) error {
	policies, err := d.client.FirewallPolicies(cloudapi.WithOperation(ctx, "firewall_policies.list"))
	if err != nil {
		return fmt.Errorf("listing firewall policies: %w", err)
	}
	var groupIDs []string
	orphaned := false
	for _, fp := range policies {
		if fp.Name != name || fp.Default {
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
		g, err := d.serverGroupByID(ctx, id, name)
		if err != nil {
			return err
		}
		if g == nil {
			continue
		}
		if err := d.deleteServerGroup(ctx, g.ID, nodeIDs(g.Servers)); err != nil {
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
		if g.Name != name || g.Default {
			continue
		}
		if err := d.deleteServerGroup(ctx, g.ID, nodeIDs(g.Servers)); err != nil {
			return err
		}
	}
	return nil
}

// deleteServerGroup empties the group id of its servers, then deletes it.
func (d *lbDriver) deleteServerGroup(ctx context.Context, id string, servers []string) error {
	if len(servers) > 0 {
		if _, err := one(ctx, "server_groups.remove_servers", func(ctx context.Context) (*brightbox.ServerGroup, error) {
			return d.client.RemoveServersFromServerGroup(ctx, id, members(servers))
		}); err != nil {
			if isNotFound(err) {
				return nil
			}
			return fmt.Errorf("emptying server group %s: %w", id, err)
		}
	}
	if _, err := one(ctx, "server_groups.delete", func(ctx context.Context) (*brightbox.ServerGroup, error) {
		return d.client.DestroyServerGroup(ctx, id)
	}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting server group %s: %w", id, err)
	}
	return nil
}
