package tritonsim

import (
	"net/http"
	"testing"

	"github.com/joyent/triton-go/network"
)

func TestFirewallRules(t *testing.T) {
	s, c := setup(t, Options{})
	worker := s.AddMachine(Machine{Name: "w1", Tags: map[string]any{"k8s-cluster": "c1"}})
	lb := s.AddMachine(Machine{Name: "lb"})
	other := s.AddMachine(Machine{Name: "other"})
	fw := c.network.Firewall()

	toLB, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Enabled: true, Description: "k8s-ccm:c1:web",
		Rule: `FROM (subnet 203.0.113.0/24 OR subnet 198.51.100.0/24) TO vm ` + lb.ID + ` ALLOW tcp PORT 443`})
	if err != nil {
		t.Fatal(err)
	}
	if !toLB.Enabled || toLB.Description != "k8s-ccm:c1:web" || toLB.ID == "" {
		t.Fatalf("created %+v", toLB)
	}
	nodes, err := fw.CreateRule(ctx(), &network.CreateRuleInput{
		Rule: `FROM vm ` + lb.ID + ` TO tag "k8s-cluster" = "c1" ALLOW tcp (PORT 30080 AND PORT 10256)`})
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{
		"FROM any TO all vms ALLOW tcp ports 30000 - 32767",
		"FROM tag k8s-cluster TO tag k8s-cluster ALLOW udp PORT all",
		"FROM any TO all vms ALLOW icmp TYPE 8 CODE 0 PRIORITY 10",
		"FROM any TO all vms BLOCK tcp ports 22, 80, 8000-8100",
	} {
		if _, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Rule: rule}); err != nil {
			t.Errorf("%q: %v", rule, err)
		}
	}
	for _, rule := range []string{
		"garbage", "FROM any TO all vms ALLOW gre", "FROM vm nope TO any ALLOW tcp PORT 1",
		"FROM any TO any ALLOW tcp PORT 70000", "FROM any TO any ALLOW tcp PORT 1 extra",
	} {
		_, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Rule: rule})
		wantAPIError(t, err, http.StatusConflict, "InvalidArgument")
	}
	if n := len(s.FirewallRules()); n != 6 {
		t.Fatalf("%d rules held, want 6", n)
	}

	ruleIDs := func(rules []*network.FirewallRule) map[string]bool {
		out := map[string]bool{}
		for _, r := range rules {
			out[r.ID] = true
		}
		return out
	}
	onWorker, err := fw.ListMachineRules(ctx(), &network.ListMachineRulesInput{MachineID: worker.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := ruleIDs(onWorker); !got[nodes.ID] || got[toLB.ID] || len(got) != 5 {
		t.Fatalf("worker's rules %v", got)
	}
	onOther, err := fw.ListMachineRules(ctx(), &network.ListMachineRulesInput{MachineID: other.ID})
	if err != nil || len(onOther) != 3 {
		t.Fatalf("other's rules %d, %v (want the three all-vms rules)", len(onOther), err)
	}
	machines, err := fw.ListRuleMachines(ctx(), &network.ListRuleMachinesInput{ID: nodes.ID})
	if err != nil || len(machines) != 2 {
		t.Fatalf("machines of the nodes rule: %d, %v (want the LB and the worker)", len(machines), err)
	}

	if disabled, err := fw.DisableRule(ctx(), &network.DisableRuleInput{ID: toLB.ID}); err != nil || disabled.Enabled {
		t.Fatalf("disabled %+v, %v", disabled, err)
	}
	updated, err := fw.UpdateRule(ctx(), &network.UpdateRuleInput{ID: toLB.ID, Enabled: true,
		Rule: "FROM subnet 203.0.113.0/24 TO vm " + lb.ID + " ALLOW tcp PORT 443"})
	if err != nil || !updated.Enabled || updated.Description != "k8s-ccm:c1:web" {
		t.Fatalf("updated %+v, %v", updated, err)
	}
	if err := fw.DeleteRule(ctx(), &network.DeleteRuleInput{ID: toLB.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = fw.GetRule(ctx(), &network.GetRuleInput{ID: toLB.ID})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
}
