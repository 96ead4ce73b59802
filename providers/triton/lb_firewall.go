package triton

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// An appliance is created with its firewall on, which blocks every
// inbound connection no rule allows: its rules open the Service ports to
// the loadBalancerSourceRanges (or anyone), and the metrics port to the
// metrics ACL. The rules are the provider's by their description,
// k8s-ccm:<cluster>:lb:<machine>, and made and deleted with the appliance;
// those of an appliance gone otherwise are swept when another is deleted.

// ruleDescription is the description of the rules of appliance machineID.
func (d *lbDriver) ruleDescription(machineID string) string {
	return d.rulePrefix() + machineID
}

// rulePrefix starts the description of every rule of the cluster's
// appliances.
func (d *lbDriver) rulePrefix() string { return "k8s-ccm:" + d.cluster + ":lb:" }

// newRules is the shared list of the rules of the cluster's appliances:
// one list of the account's rules (CloudAPI lists them all in one call)
// serves every appliance's sync within the TTL, so a node joining two
// hundred load balancers reads the rules once, not once per appliance.
func (d *lbDriver) newRules(ttl time.Duration) *sharedList[network.FirewallRule] {
	prefix := d.rulePrefix()
	ours := func(r *network.FirewallRule) bool { return strings.HasPrefix(r.Description, prefix) }
	return newSharedList(func(ctx context.Context) ([]*network.FirewallRule, error) {
		rules, err := d.api.listRules(ctx)
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(rules, func(r *network.FirewallRule) bool { return !ours(r) }), nil
	}, func(r *network.FirewallRule) string { return r.ID }, ours, ttl)
}

// ensureRules makes the appliance's rules exactly want (none: delete them
// all), from the shared list of the rules. It reports whether it wrote.
func (d *lbDriver) ensureRules(ctx context.Context, machineID string, want []string) (bool, error) {
	rules, err := d.rules.all(ctx, false)
	if err != nil {
		return false, err
	}
	desc := d.ruleDescription(machineID)
	var own []*network.FirewallRule
	for _, r := range rules {
		if strings.HasPrefix(r.Description, desc) {
			own = append(own, r)
		}
	}
	create, del := ruleChanges(own, want)
	for _, id := range del {
		if err := d.deleteRule(ctx, machineID, id); err != nil {
			return true, err
		}
	}
	for _, rule := range create {
		klog.FromContext(ctx).V(2).Info("Creating firewall rule", "machine", machineID, "rule", rule)
		r, err := d.api.Network().Firewall().CreateRule(withOp(ctx, "fwrules.create"), &network.CreateRuleInput{Enabled: true, Rule: rule, Description: desc})
		if err != nil {
			return true, fmt.Errorf("creating firewall rule %q: %w", rule, err)
		}
		if err := checkRule(r); err != nil {
			return true, fmt.Errorf("creating firewall rule %q: %w", rule, err)
		}
		created := *r
		if created.Rule == "" || created.Description == "" {
			// What was asked for, should CloudAPI leave it out.
			created.Rule, created.Description = rule, desc
		}
		d.rules.store(&created)
	}
	return len(create)+len(del) > 0, nil
}

// deleteRule deletes rule id of appliance machineID; a rule gone already
// needs nothing.
func (d *lbDriver) deleteRule(ctx context.Context, machineID, id string) error {
	klog.FromContext(ctx).V(2).Info("Deleting firewall rule", "machine", machineID, "rule", id)
	if _, err := one(ctx, "fwrules.delete", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.api.Network().Firewall().DeleteRule(ctx, &network.DeleteRuleInput{ID: id})
	}); err != nil && !notFound(err) {
		return fmt.Errorf("deleting firewall rule %s: %w", id, err)
	}
	d.rules.forget(id)
	return nil
}

// sweepRules deletes the rules of the cluster's appliances that are gone.
// Nothing else finds them once their appliance is: a rule list that missed
// some when the appliance was deleted (a list is all an appliance's rules
// are found by), or an appliance deleted by hand, would leave them for
// ever. The rules are the shared list's (fresh: one that starts now, for
// the cluster's last appliance, after which nothing sweeps); a rule's
// appliance is gone when ms (the cluster's machines) does not hold it
// live and CloudAPI answers 404 or 410 for it.
func (d *lbDriver) sweepRules(ctx context.Context, ms []*compute.Instance, fresh bool) error {
	rules, err := d.rules.all(ctx, fresh)
	if err != nil {
		return err
	}
	live := make(map[string]bool, len(ms))
	for _, m := range ms {
		live[m.ID] = m.State != machineDeleted
	}
	gone := map[string]bool{}
	for _, r := range rules {
		id, ok := d.ruleMachine(r)
		if !ok || live[id] {
			continue
		}
		if _, read := gone[id]; !read {
			_, err := d.machine(ctx, id)
			if err != nil && !framework.IsNotFound(err) {
				return err
			}
			gone[id] = err != nil // not found
		}
		if gone[id] {
			if err := d.deleteRule(ctx, id, r.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// ruleMachine returns the appliance whose rule r is, by its description
// (ruleDescription); ok is false for a rule of no appliance of the cluster.
func (d *lbDriver) ruleMachine(r *network.FirewallRule) (id string, ok bool) {
	id, ok = strings.CutPrefix(r.Description, d.rulePrefix())
	return id, ok && isMachineID(id)
}
