package triton

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/joyent/triton-go/network"
	"k8s.io/klog/v2"
)

// An appliance is created with its firewall on, which blocks every
// inbound connection no rule allows: its rules open the Service ports to
// the loadBalancerSourceRanges (or anyone), and the metrics port to the
// metrics ACL. The rules are the provider's by their description,
// k8s-ccm:<cluster>:lb:<machine>, and made and deleted with the appliance.

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
		rules, err := d.api.network().Firewall().ListRules(withOp(ctx, "fwrules.list"), &network.ListRulesInput{})
		if err != nil {
			return nil, fmt.Errorf("listing firewall rules: %w", err)
		}
		var out []*network.FirewallRule
		for _, r := range rules {
			switch {
			case r == nil || r.ID == "":
				return nil, errors.New("listing firewall rules: malformed response: a rule without id")
			case ours(r):
				out = append(out, r)
			}
		}
		return out, nil
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
		klog.FromContext(ctx).V(2).Info("Deleting firewall rule", "machine", machineID, "rule", id)
		if _, err := one(ctx, "fwrules.delete", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, d.api.network().Firewall().DeleteRule(ctx, &network.DeleteRuleInput{ID: id})
		}); err != nil && !notFound(err) {
			return true, fmt.Errorf("deleting firewall rule %s: %w", id, err)
		}
		d.rules.forget(id)
	}
	for _, rule := range create {
		klog.FromContext(ctx).V(2).Info("Creating firewall rule", "machine", machineID, "rule", rule)
		r, err := d.api.network().Firewall().CreateRule(withOp(ctx, "fwrules.create"), &network.CreateRuleInput{Enabled: true, Rule: rule, Description: desc})
		if err != nil {
			return true, fmt.Errorf("creating firewall rule %q: %w", rule, err)
		}
		if r == nil || r.ID == "" {
			return true, fmt.Errorf("creating firewall rule %q: malformed response: no rule", rule)
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
