package triton

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/joyent/triton-go/network"

	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// The firewall controller keeps the cluster-wide Cloud Firewall rules;
// the load-balancer driver keeps the rules of each Moirai appliance
// (lb_firewall.go: the Service ports from loadBalancerSourceRanges, the
// metrics port), made and deleted with the appliance. The two never touch
// each other's rules: the controller's descriptions are
// k8s-ccm:<cluster>:fw:<key>, the driver's k8s-ccm:<cluster>:lb:<machine>.
//
// The cluster-wide rules (sdc-fwrule syntax, written as FWAPI writes a
// rule's text back):
//
//	FROM tag "k8s-cluster" = "<c>" TO tag "k8s-cluster" = "<c>" ALLOW tcp PORT all
//	FROM tag "k8s-cluster" = "<c>" TO tag "k8s-cluster" = "<c>" ALLOW udp PORT all
//	FROM tag "k8s-cluster" = "<c>" TO tag "k8s-cluster" = "<c>" ALLOW icmp TYPE all
//	FROM any TO tag "k8s-cluster" = "<c>" ALLOW tcp PORTS 30000 - 32767   (TRITON_FIREWALL_NODEPORTS_PUBLIC)
//
// The first three let the nodes reach each other (pod traffic, VXLAN and
// the kubelets included) and the appliances reach the nodes: the
// appliances are tagged k8s-cluster=<c> too, so their traffic to the
// NodePorts and to kube-proxy's health port needs no rule of its own. The
// controller tags every node's machine with the cluster
// (firewall_controller.go), so a node no load balancer uses yet is covered
// as well. Rules are enforced only on machines whose firewall is on; the
// appliances' is, the nodes' only when the user (or
// TRITON_FIREWALL_ENABLE_NODES) turns it on.

// The keys of the cluster-wide rules, the last part of their descriptions.
// A rule of ours is one whose description is the prefix and one of these
// keys exactly: any other rule (another description, or none) is the
// user's and never touched.
const (
	fwKeyNodesTCP  = "nodes-tcp"
	fwKeyNodesUDP  = "nodes-udp"
	fwKeyNodesICMP = "nodes-icmp"
	fwKeyNodePorts = "nodeports-public"
)

var fwKeys = []string{fwKeyNodesTCP, fwKeyNodesUDP, fwKeyNodesICMP, fwKeyNodePorts}

// listRules lists the account's rules (CloudAPI lists them all in one
// call). A list holding a rule checkRule refuses is a malformed response.
func (a *api) listRules(ctx context.Context) ([]*network.FirewallRule, error) {
	rules, err := cloud.Guarded("fwrules.list", func() ([]*network.FirewallRule, error) {
		return a.Network().Firewall().ListRules(withOp(ctx, "fwrules.list"), &network.ListRulesInput{})
	})
	if err != nil {
		return nil, fmt.Errorf("listing firewall rules: %w", err)
	}
	for _, r := range rules {
		if err := checkRule(r); err != nil {
			return nil, fmt.Errorf("listing firewall rules: %w", err)
		}
	}
	return rules, nil
}

// checkRule returns an error for a rule CloudAPI does not send: none, or
// one whose ID is no UUID (FWAPI's rule UUID, which a write names: taken as
// it is, a delete would miss the rule and the rule would be left behind).
// The description is optional: CloudAPI leaves it out when it is empty.
func checkRule(r *network.FirewallRule) error {
	switch {
	case r == nil:
		return errors.New("malformed response: no rule")
	case !cloud.IsUUID(r.ID):
		return fmt.Errorf("malformed response: rule ID %q", r.ID)
	}
	return nil
}

// clusterRule is a cluster-wide rule: its description and text.
type clusterRule struct {
	desc, rule string
}

// clusterRulePrefix starts the description of every cluster-wide rule.
func clusterRulePrefix(cluster string) string { return "k8s-ccm:" + cluster + ":fw:" }

// isClusterRule reports whether r is one of the cluster's rules: a
// non-global rule whose description is one of ours exactly (so another
// cluster's, whose name starts like ours, is not).
func isClusterRule(cluster string, r *network.FirewallRule) bool {
	key, ok := strings.CutPrefix(r.Description, clusterRulePrefix(cluster))
	if !ok || r.Global {
		return false
	}
	for _, k := range fwKeys {
		if key == k {
			return true
		}
	}
	return false
}

// desiredClusterRules are the rules the settings ask for. s must be
// valid.
func desiredClusterRules(cluster string, s *FirewallSettings) []clusterRule {
	tag := fmt.Sprintf(`tag "%s" = "%s"`, clusterTag, cluster)
	among := "FROM " + tag + " TO " + tag + " ALLOW "
	desc := clusterRulePrefix(cluster)
	want := []clusterRule{
		{desc + fwKeyNodesTCP, among + "tcp PORT all"},
		{desc + fwKeyNodesUDP, among + "udp PORT all"},
		{desc + fwKeyNodesICMP, among + "icmp TYPE all"},
	}
	if s.NodePortsPublic {
		first, last, _ := s.nodePorts()
		ports := fmt.Sprintf("PORTS %d - %d", first, last)
		if first == last {
			ports = fmt.Sprintf("PORT %d", first)
		}
		want = append(want, clusterRule{desc + fwKeyNodePorts, "FROM any TO " + tag + " ALLOW tcp " + ports})
	}
	return want
}

// ruleWrite is one write that brings the rules to what is wanted.
type ruleWrite struct {
	op   string // create, update (text or state), enable, delete
	id   string // the rule's, for all but create
	want clusterRule
}

const (
	ruleCreate = "create"
	ruleUpdate = "update"
	ruleEnable = "enable"
	ruleDelete = "delete"
)

// clusterRuleChanges are the writes that make the cluster's rules among
// have (the account's, as listed) exactly want: a missing rule created,
// one whose text differs updated in place, a disabled one enabled, a
// duplicate or a rule no longer wanted deleted. Creates and updates come
// before deletes, so no traffic a rule allows is cut in between. The
// user's rules are not looked at.
func clusterRuleChanges(cluster string, have []*network.FirewallRule, want []clusterRule) []ruleWrite {
	byDesc := map[string][]*network.FirewallRule{}
	var descs []string
	for _, r := range have {
		if !isClusterRule(cluster, r) {
			continue
		}
		if byDesc[r.Description] == nil {
			descs = append(descs, r.Description)
		}
		byDesc[r.Description] = append(byDesc[r.Description], r)
	}
	var writes, deletes []ruleWrite
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.desc] = true
		rules := byDesc[w.desc]
		keep := keeper(rules, w)
		switch {
		case keep == nil:
			writes = append(writes, ruleWrite{op: ruleCreate, want: w})
		case !sameRuleText(keep.Rule, w.rule):
			writes = append(writes, ruleWrite{op: ruleUpdate, id: keep.ID, want: w})
		case !keep.Enabled:
			writes = append(writes, ruleWrite{op: ruleEnable, id: keep.ID, want: w})
		}
		for _, r := range rules {
			if r != keep {
				deletes = append(deletes, ruleWrite{op: ruleDelete, id: r.ID, want: w})
			}
		}
	}
	for _, d := range descs {
		if wanted[d] {
			continue
		}
		for _, r := range byDesc[d] {
			deletes = append(deletes, ruleWrite{op: ruleDelete, id: r.ID, want: clusterRule{desc: d, rule: r.Rule}})
		}
	}
	return append(writes, deletes...)
}

// keeper is the rule among rules (all with w's description) to keep: one
// already right, else one with the right text, else the first.
func keeper(rules []*network.FirewallRule, w clusterRule) *network.FirewallRule {
	var sameText *network.FirewallRule
	for _, r := range rules {
		if sameRuleText(r.Rule, w.rule) {
			if r.Enabled {
				return r
			}
			if sameText == nil {
				sameText = r
			}
		}
	}
	if sameText != nil {
		return sameText
	}
	if len(rules) > 0 {
		return rules[0]
	}
	return nil
}

// sameRuleText reports whether two rule texts say the same, as far as the
// way FWAPI may write a text back goes: case, spaces, quotes around tag
// names and values, and spaces around "=" and a port range's "-".
func sameRuleText(a, b string) bool { return canonicalRule(a) == canonicalRule(b) }

func canonicalRule(rule string) string {
	s := normalizeRule(strings.ReplaceAll(rule, `"`, " "))
	return strings.NewReplacer(" = ", "=", " - ", "-").Replace(s)
}
