package triton

import (
	"context"
	"fmt"
	"strings"

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
	return "k8s-ccm:" + d.cluster + ":lb:" + machineID
}

// ensureRules makes the appliance's rules exactly want (none: delete them
// all), from one list of the rules that name it. It reports whether it
// wrote.
func (d *lbDriver) ensureRules(ctx context.Context, machineID string, want []string) (bool, error) {
	fw := d.api.network().Firewall()
	rules, err := one(ctx, "machines.fwrules.list", func(ctx context.Context) ([]*network.FirewallRule, error) {
		return fw.ListMachineRules(ctx, &network.ListMachineRulesInput{MachineID: machineID})
	})
	switch {
	case notFound(err) && len(want) == 0:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("listing the firewall rules of machine %s: %w", machineID, err)
	}
	desc := d.ruleDescription(machineID)
	var own []*network.FirewallRule
	for _, r := range rules {
		if r != nil && strings.HasPrefix(r.Description, desc) {
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
	}
	return len(create)+len(del) > 0, nil
}
