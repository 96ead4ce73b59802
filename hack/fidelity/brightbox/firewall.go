package main

import (
	"net/http"
	"slices"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

// firewall makes what the existing CCM makes beside a load balancer: a
// server group of the nodes with a firewall policy applied and a rule
// letting the node port in; it changes them and removes them again.
func (r *run) firewall() error {
	const name = "fidelity.default.kubernetes"
	grp, err := r.c.CreateServerGroup(r.ctx, brightbox.ServerGroupOptions{Name: ptr(name), Description: ptr(name)})
	if err != nil {
		return err
	}
	if err := r.expect(grp.Name == name && !grp.Default && len(grp.Servers) == 0 && grp.Fqdn != "", "created group = %+v", grp); err != nil {
		return err
	}
	members := brightbox.ServerGroupMemberList{Servers: []brightbox.ServerGroupMember{{Server: r.node.ID}}}
	if grp, err = r.c.AddServersToServerGroup(r.ctx, grp.ID, members); err != nil {
		return err
	}
	if err := r.expect(len(grp.Servers) == 1 && grp.Servers[0].ID == r.node.ID, "group after add_servers = %+v", grp.Servers); err != nil {
		return err
	}
	_, err = r.c.AddServersToServerGroup(r.ctx, grp.ID, members)
	if err := r.expectStatus(err, http.StatusConflict, "add a member again"); err != nil {
		return err
	}
	srv, err := r.c.Server(r.ctx, r.node.ID)
	if err != nil {
		return err
	}
	if err := r.expect(slices.ContainsFunc(srv.ServerGroups, func(g brightbox.ServerGroup) bool { return g.ID == grp.ID }),
		"server's groups %+v lack %s", srv.ServerGroups, grp.ID); err != nil {
		return err
	}
	if grp, err = r.c.UpdateServerGroup(r.ctx, brightbox.ServerGroupOptions{ID: grp.ID, Description: ptr("changed")}); err != nil {
		return err
	}
	if err := r.expect(grp.Description == "changed" && grp.Name == name, "updated group = %+v", grp); err != nil {
		return err
	}

	pol, err := r.c.CreateFirewallPolicy(r.ctx, brightbox.FirewallPolicyOptions{Name: ptr(name)})
	if err != nil {
		return err
	}
	if pol, err = r.c.ApplyFirewallPolicy(r.ctx, pol.ID, brightbox.FirewallPolicyAttachment{ServerGroup: grp.ID}); err != nil {
		return err
	}
	if err := r.expect(pol.ServerGroup != nil && pol.ServerGroup.ID == grp.ID, "policy after apply_to = %+v", pol.ServerGroup); err != nil {
		return err
	}
	rule, err := r.c.CreateFirewallRule(r.ctx, brightbox.FirewallRuleOptions{FirewallPolicy: pol.ID,
		Protocol: ptr("tcp"), Source: ptr("any"), DestinationPort: ptr("31080"), Description: ptr(name)})
	if err != nil {
		return err
	}
	if rule, err = r.c.UpdateFirewallRule(r.ctx, brightbox.FirewallRuleOptions{ID: rule.ID,
		DestinationPort: ptr("31080,31443")}); err != nil {
		return err
	}
	if err := r.expect(rule.DestinationPort == "31080,31443" && rule.Protocol == "tcp" && rule.Source == "any",
		"updated rule = %+v", rule); err != nil {
		return err
	}
	if pol, err = r.c.FirewallPolicy(r.ctx, pol.ID); err != nil {
		return err
	}
	if err := r.expect(len(pol.Rules) == 1 && pol.Rules[0].ID == rule.ID && pol.Rules[0].DestinationPort == "31080,31443",
		"policy's rules = %+v", pol.Rules); err != nil {
		return err
	}
	if grp, err = r.c.ServerGroup(r.ctx, grp.ID); err != nil {
		return err
	}
	if err := r.expect(grp.FirewallPolicy != nil && grp.FirewallPolicy.ID == pol.ID, "group's policy = %+v", grp.FirewallPolicy); err != nil {
		return err
	}
	return r.firewallCleanup(grp, pol, rule, members)
}

// firewallCleanup removes what firewall made, as the existing CCM does
// when a Service goes, and checks nothing of it is left.
func (r *run) firewallCleanup(grp *brightbox.ServerGroup, pol *brightbox.FirewallPolicy, rule *brightbox.FirewallRule,
	members brightbox.ServerGroupMemberList) error {
	if _, err := r.c.DestroyFirewallRule(r.ctx, rule.ID); err != nil {
		return err
	}
	if _, err := r.c.RemoveFirewallPolicy(r.ctx, pol.ID, brightbox.FirewallPolicyAttachment{ServerGroup: grp.ID}); err != nil {
		return err
	}
	if _, err := r.c.DestroyFirewallPolicy(r.ctx, pol.ID); err != nil {
		return err
	}
	if _, err := r.c.RemoveServersFromServerGroup(r.ctx, grp.ID, members); err != nil {
		return err
	}
	if _, err := r.c.DestroyServerGroup(r.ctx, grp.ID); err != nil {
		return err
	}
	_, err := r.c.FirewallPolicy(r.ctx, pol.ID)
	if err := r.expectStatus(err, http.StatusNotFound, "destroyed policy"); err != nil {
		return err
	}
	_, err = r.c.FirewallRule(r.ctx, rule.ID)
	if err := r.expectStatus(err, http.StatusNotFound, "destroyed rule"); err != nil {
		return err
	}
	groups, err := r.c.ServerGroups(r.ctx)
	if err != nil {
		return err
	}
	def := slices.IndexFunc(groups, func(g brightbox.ServerGroup) bool { return g.Default })
	if err := r.expect(def >= 0 && !slices.ContainsFunc(groups, func(g brightbox.ServerGroup) bool { return g.ID == grp.ID }),
		"groups after destroy = %+v", groups); err != nil {
		return err
	}
	_, err = r.c.DestroyServerGroup(r.ctx, groups[def].ID)
	return r.expectStatus(err, http.StatusConflict, "destroy the default group")
}
