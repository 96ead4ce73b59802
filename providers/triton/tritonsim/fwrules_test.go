package tritonsim

import (
	"net/http"
	"testing"

	"github.com/joyent/triton-go/compute"
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

// TestFirewallRuleText checks that a rule is served as FWAPI writes it
// back, whatever spelling it was created with: the expected texts are
// sdc-fwrule's own test expectations (test/rule.test.js) and the forms
// the CloudAPI docs use.
func TestFirewallRuleText(t *testing.T) {
	s, c := setup(t, Options{})
	fw := c.network.Firewall()
	vm1, vm2 := "9a343ca8-b42a-4a27-a9c5-800f57d1e8ed", "518908b6-8299-466d-8ea5-20a0ceff63ec"
	for in, want := range map[string]string{
		"FROM (ip 192.168.1.1 OR vm " + vm1 + " OR tag tag1 OR subnet 192.168.2.0/24) TO (ip 10.2.0.3 OR vm " + vm2 + " OR tag tag2 OR subnet 10.2.1.0/24) ALLOW tcp port 80": "FROM (ip 192.168.1.1 OR subnet 192.168.2.0/24 OR tag \"tag1\" OR vm " + vm1 + ") TO (ip 10.2.0.3 OR subnet 10.2.1.0/24 OR tag \"tag2\" OR vm " + vm2 + ") ALLOW tcp PORT 80",
		"FROM ip 10.88.88.1 TO tag tag2 ALLOW tcp PORTS 1002, 1052":                                                         "FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp (PORT 1002 AND PORT 1052)",
		"FROM ip 10.88.88.1 TO tag tag2 ALLOW tcp (PORT 1002 AND PORT 10 AND PORT 6)":                                       "FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp (PORT 6 AND PORT 10 AND PORT 1002)",
		"FROM ip 10.88.88.1 TO tag tag2 ALLOW tcp PORTS 1002, 20-40, 10, 1052, 80, 30245, 6 - 11":                           "FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp PORTS 6 - 11, 10, 20 - 40, 80, 1002, 1052, 30245",
		"FROM ip 10.88.88.1 TO tag tag2 ALLOW tcp PORTS 50-50":                                                              "FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp PORTS 50 - 50",
		"FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp ( PORT all )":                                                         "FROM ip 10.88.88.1 TO tag \"tag2\" ALLOW tcp PORT all",
		"from ip 1.2.3.4 to tag some-tag = value allow tcp port 80":                                                         "FROM ip 1.2.3.4 TO tag \"some-tag\" = \"value\" ALLOW tcp PORT 80",
		"FROM (tag some-tag OR tag some-tag = value0) TO (tag some-tag = value2 OR tag some-tag = value) ALLOW tcp PORT 80": "FROM tag \"some-tag\" TO (tag \"some-tag\" = \"value\" OR tag \"some-tag\" = \"value2\") ALLOW tcp PORT 80",
		"FROM any TO vm " + vm1 + " ALLOW icmp (TYPE 8 CODE 0 AND TYPE 3 CODE 11 AND TYPE 40 AND TYPE 3 CODE 1)":            "FROM any TO vm " + vm1 + " ALLOW icmp (TYPE 3 CODE 1 AND TYPE 3 CODE 11 AND TYPE 8 CODE 0 AND TYPE 40)",
		"FROM ip 192.168.3.2 TO all vms ALLOW tcp PORT 80":                                                                  "FROM ip 192.168.3.2 TO all vms ALLOW tcp PORT 80",
		`FROM any TO tag "k8s-cluster" = "c1" ALLOW tcp ports 30000 - 32767`:                                                `FROM any TO tag "k8s-cluster" = "c1" ALLOW tcp PORTS 30000 - 32767`,
		`FROM tag "k8s-cluster" = "c1" TO tag "k8s-cluster" = "c1" ALLOW icmp type all`:                                     `FROM tag "k8s-cluster" = "c1" TO tag "k8s-cluster" = "c1" ALLOW icmp TYPE all`,
		"FROM any TO all vms BLOCK udp PORT 53 PRIORITY 10":                                                                 "FROM any TO all vms BLOCK udp PORT 53 PRIORITY 10",
		"FROM (subnet 9.0.0.0/8 OR subnet 10.0.0.0/8) TO vm " + vm1 + " ALLOW tcp PORT 443":                                 "FROM (subnet 10.0.0.0/8 OR subnet 9.0.0.0/8) TO vm " + vm1 + " ALLOW tcp PORT 443",
	} {
		created, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Rule: in, Enabled: true})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		got, err := fw.GetRule(ctx(), &network.GetRuleInput{ID: created.ID})
		if err != nil || created.Rule != want || got.Rule != want {
			t.Errorf("%q\n is served as %q (created) and %q (%v),\n want %q", in, created.Rule, got.Rule, err, want)
		}
		if again, err := parseFWRule(want); err != nil || again.text() != want {
			t.Errorf("%q does not read back as itself: %q, %v", want, again.text(), err)
		}
	}
	for _, rule := range []string{
		"FROM any TO any ALLOW tcp PORT 80",
		"FROM ip 10.0.0.1 TO subnet 10.0.0.0/8 ALLOW tcp PORT 80",
		"FROM any TO all vms ALLOW tcp PORTS 90-80",
		"FROM any TO all vms ALLOW icmp (TYPE 8 AND PORT 1)",
	} {
		_, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Rule: rule})
		wantAPIError(t, err, http.StatusConflict, "InvalidArgument")
	}
	seeded, err := s.AddFirewallRule(FirewallRule{Rule: "from any to tag role allow tcp port 22"})
	if err != nil || seeded.Rule != `FROM any TO tag "role" ALLOW tcp PORT 22` {
		t.Fatalf("AddFirewallRule keeps %q, %v", seeded.Rule, err)
	}
}

// TestMachineFirewallToggle checks enable_firewall and disable_firewall
// through triton-go, as the machine serves them back.
func TestMachineFirewallToggle(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{Name: "node"})
	inst := c.compute.Instances()
	for _, on := range []bool{true, false, true} {
		var err error
		if on {
			err = inst.EnableFirewall(ctx(), &compute.EnableFirewallInput{ID: m.ID})
		} else {
			err = inst.DisableFirewall(ctx(), &compute.DisableFirewallInput{ID: m.ID})
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := inst.Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
		if err != nil || got.FirewallEnabled != on {
			t.Fatalf("after turning the firewall %v: %+v, %v", on, got, err)
		}
	}
	err := inst.EnableFirewall(ctx(), &compute.EnableFirewallInput{ID: "00000000-0000-0000-0000-000000000000"})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
}

// TestFirewallRuleLog: a rule carries log, false unless the create or an
// update sets it; global only when true, description only when set; a
// global rule cannot be updated (sdc-cloudapi lib/rules.js translate,
// create, update). Sent as node-triton sends them (`triton fwrule create
// --log`, `triton fwrule update RULE log=false`).
func TestFirewallRuleLog(t *testing.T) {
	s, c := setup(t, Options{})
	path := "/" + s.Account() + "/fwrules"
	var plain, logged map[string]any
	if _, err := call(t, c, http.MethodPost, path, map[string]any{"rule": "FROM any TO all vms ALLOW tcp PORT 22", "enabled": true}, &plain); err != nil {
		t.Fatal(err)
	}
	if plain["log"] != false || plain["global"] != nil || plain["description"] != nil {
		t.Fatalf("a rule created without log: %v", plain)
	}
	if _, err := call(t, c, http.MethodPost, path, map[string]any{"rule": "FROM any TO all vms ALLOW tcp PORT 80", "log": true, "description": "web"}, &logged); err != nil {
		t.Fatal(err)
	}
	if logged["log"] != true || logged["description"] != "web" {
		t.Fatalf("a rule created with log: %v", logged)
	}
	id, _ := logged["id"].(string)
	var updated map[string]any
	if _, err := call(t, c, http.MethodPost, path+"/"+id, map[string]any{"log": false}, &updated); err != nil {
		t.Fatal(err)
	}
	if updated["log"] != false || updated["description"] != "web" {
		t.Fatalf("after log=false: %v", updated)
	}
	if rules := s.FirewallRules(); rules[1].Log || rules[0].Log {
		t.Fatalf("rules %+v", rules)
	}

	global, err := s.AddFirewallRule(FirewallRule{Rule: "FROM any TO all vms ALLOW icmp TYPE 8", Global: true, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, c, http.MethodPost, path+"/"+global.ID, map[string]any{"log": true}, nil)
	wantAPIError(t, err, http.StatusConflict, "InvalidArgument")
}
