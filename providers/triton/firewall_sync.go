package triton

import (
	"context"
	"fmt"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	"k8s.io/klog/v2"
)

// syncRules lists the account's rules once and makes the cluster's rules
// what the settings ask for, writing only what differs. A failed list (a
// 500, a malformed answer) is an error before any write, so nothing is
// deleted on it.
func (c *firewallController) syncRules(ctx context.Context) error {
	rules, err := c.api.listRules(ctx)
	if err != nil {
		return err
	}
	for _, w := range clusterRuleChanges(c.cluster, rules, desiredClusterRules(c.cluster, &c.settings)) {
		if err := c.writeRule(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// writeRule makes one write. A rule to update or enable that is gone
// since the list is created again; one to delete that is gone needs
// nothing.
func (c *firewallController) writeRule(ctx context.Context, w ruleWrite) error {
	fw := c.api.Network().Firewall()
	logger := klog.FromContext(ctx).WithValues("description", w.want.desc)
	var err error
	switch w.op {
	case ruleCreate:
		logger.Info("Creating firewall rule", "rule", w.want.rule)
		var r *network.FirewallRule
		r, err = fw.CreateRule(withOp(ctx, "fwrules.create"), &network.CreateRuleInput{Enabled: true, Rule: w.want.rule, Description: w.want.desc})
		if err == nil {
			err = checkRule(r)
		}
	case ruleUpdate:
		logger.Info("Putting firewall rule back", "id", w.id, "rule", w.want.rule)
		_, err = one(ctx, "fwrules.update", func(ctx context.Context) (*network.FirewallRule, error) {
			return fw.UpdateRule(ctx, &network.UpdateRuleInput{ID: w.id, Enabled: true, Rule: w.want.rule, Description: w.want.desc})
		})
	case ruleEnable:
		logger.Info("Enabling firewall rule", "id", w.id, "rule", w.want.rule)
		_, err = one(ctx, "fwrules.enable", func(ctx context.Context) (*network.FirewallRule, error) {
			return fw.EnableRule(ctx, &network.EnableRuleInput{ID: w.id})
		})
	case ruleDelete:
		logger.Info("Deleting firewall rule", "id", w.id, "rule", w.want.rule)
		_, err = one(ctx, "fwrules.delete", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, fw.DeleteRule(ctx, &network.DeleteRuleInput{ID: w.id})
		})
		if notFound(err) {
			return nil
		}
	}
	if notFound(err) {
		return c.writeRule(ctx, ruleWrite{op: ruleCreate, want: w.want})
	}
	if err != nil {
		return fmt.Errorf("firewall rule %s: %s %q: %w", w.want.desc, w.op, w.want.rule, err)
	}
	return nil
}

// syncNodes tags every node's machine with the cluster, so the cluster's
// rules cover it, and, with TRITON_FIREWALL_ENABLE_NODES, turns its
// firewall on. The machines are read from the shared list of the
// cluster's machines: a node whose machine is in it is tagged already. The
// others are tagged (a tag merge, which keeps the machine's other tags),
// then the list is read again once, so it holds them as CloudAPI does.
func (c *firewallController) syncNodes(ctx context.Context) error {
	if c.machines == nil {
		return nil
	}
	ids, err := c.nodeMachines()
	if err != nil || len(ids) == 0 {
		return err
	}
	byID, err := c.clusterMachines(ctx, false)
	if err != nil {
		return err
	}
	tagged := 0
	for _, id := range ids {
		if byID[id] != nil {
			continue
		}
		ok, err := c.tagNode(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			tagged++
		}
	}
	if tagged > 0 {
		if byID, err = c.clusterMachines(ctx, true); err != nil {
			return err
		}
	}
	if !c.settings.EnableNodes {
		return nil
	}
	for _, id := range ids {
		if m := byID[id]; m != nil && !m.FirewallEnabled && m.State != machineDeleted {
			if err := c.enableFirewall(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// clusterMachines is the shared list of the cluster's machines by ID
// (fresh: listed after this call).
func (c *firewallController) clusterMachines(ctx context.Context, fresh bool) (map[string]*compute.Instance, error) {
	list, err := c.machines.all(ctx, fresh)
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's machines: %w", err)
	}
	byID := make(map[string]*compute.Instance, len(list))
	for _, m := range list {
		byID[m.ID] = m
	}
	return byID, nil
}

// tagNode tags a node's machine k8s-cluster=<cluster> (one tagged with
// another value is retagged: its Node is this cluster's). It reports
// false for a machine that is gone (404, 410): a Node about to be
// deleted.
func (c *firewallController) tagNode(ctx context.Context, id string) (bool, error) {
	klog.FromContext(ctx).Info("Tagging the node's machine with the cluster", "machine", id, "tag", clusterTag)
	_, err := one(ctx, "machines.tags.add", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.Compute().Instances().AddTags(ctx, &compute.AddTagsInput{ID: id, Tags: map[string]string{clusterTag: c.cluster}})
	})
	switch {
	case notFound(err) || machineGone(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("tagging machine %s with %s=%s: %w", id, clusterTag, c.cluster, err)
	}
	return true, nil
}

// enableFirewall turns machine m's firewall on.
func (c *firewallController) enableFirewall(ctx context.Context, m *compute.Instance) error {
	klog.FromContext(ctx).Info("Turning the node's firewall on", "machine", m.ID, "name", m.Name)
	_, err := one(ctx, "machines.firewall.enable", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.Compute().Instances().EnableFirewall(ctx, &compute.EnableFirewallInput{ID: m.ID})
	})
	switch {
	case notFound(err) || machineGone(err):
		c.machines.forget(m.ID)
		return nil
	case err != nil:
		return fmt.Errorf("turning the firewall of machine %s on: %w", m.ID, err)
	}
	next := *m
	next.FirewallEnabled = true
	c.machines.store(&next)
	return nil
}
