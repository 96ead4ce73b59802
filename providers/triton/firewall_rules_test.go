package triton

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/network"
)

// TestClusterRuleChanges: each rule of ours is created, updated, enabled
// or deleted as it differs from what is wanted; duplicates go; the user's
// rules and another cluster's are not looked at; writes come before
// deletes.
func TestClusterRuleChanges(t *testing.T) {
	s := &FirewallSettings{}
	want := desiredClusterRules("c1", s)
	prefix := clusterRulePrefix("c1")
	rule := func(id, key, text string, enabled bool) *network.FirewallRule {
		return &network.FirewallRule{ID: id, Description: prefix + key, Rule: text, Enabled: enabled}
	}
	have := []*network.FirewallRule{
		rule("tcp-old", fwKeyNodesTCP, want[0].rule, false),
		rule("tcp", fwKeyNodesTCP, want[0].rule, true),
		rule("udp", fwKeyNodesUDP, "FROM any TO all vms ALLOW udp PORT 53", true),
		rule("ports", fwKeyNodePorts, "FROM any TO all vms ALLOW tcp PORTS 30000 - 32767", true),
		{ID: "user", Rule: want[2].rule, Enabled: false},
		{ID: "global", Rule: want[2].rule, Description: prefix + fwKeyNodesICMP, Global: true},
		{ID: "other", Rule: want[2].rule, Description: "k8s-ccm:c1:fw:x:fw:" + fwKeyNodesICMP},
	}
	var got []string
	for _, w := range clusterRuleChanges("c1", have, want) {
		got = append(got, w.op+" "+w.id+" "+strings.TrimPrefix(w.want.desc, prefix))
	}
	wantOps := []string{
		"update udp " + fwKeyNodesUDP,
		"create  " + fwKeyNodesICMP,
		"delete tcp-old " + fwKeyNodesTCP,
		"delete ports " + fwKeyNodePorts,
	}
	if !slices.Equal(got, wantOps) {
		t.Errorf("changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantOps, "\n"))
	}

	disabled := []*network.FirewallRule{rule("tcp", fwKeyNodesTCP, want[0].rule, false)}
	if got := clusterRuleChanges("c1", disabled, want[:1]); len(got) != 1 || got[0].op != ruleEnable || got[0].id != "tcp" {
		t.Errorf("a disabled rule: %+v, want it enabled", got)
	}
}

func TestDesiredClusterRules(t *testing.T) {
	s := &FirewallSettings{NodePortsPublic: true, NodePortRange: "30080-30080"}
	got := desiredClusterRules("prod", s)
	if len(got) != 4 || got[3].rule != `FROM any TO tag "k8s-cluster" = "prod" ALLOW tcp PORT 30080` || got[3].desc != "k8s-ccm:prod:fw:nodeports-public" {
		t.Errorf("rules %+v", got)
	}
	if got := desiredClusterRules("prod", &FirewallSettings{}); len(got) != 3 {
		t.Errorf("with the public NodePorts off: %+v", got)
	}
}

func TestSameRuleText(t *testing.T) {
	base := `FROM tag "k8s-cluster" = "c1" TO tag "k8s-cluster" = "c1" ALLOW tcp PORTS 30000 - 32767`
	for text, same := range map[string]bool{
		base: true,
		`from tag k8s-cluster=c1 to  tag "k8s-cluster" = c1 allow TCP ports 30000-32767`:          true,
		`FROM tag "k8s-cluster" = "c2" TO tag "k8s-cluster" = "c1" ALLOW tcp PORTS 30000 - 32767`: false,
		`FROM tag "k8s-cluster" = "c1" TO tag "k8s-cluster" = "c1" BLOCK tcp PORTS 30000 - 32767`: false,
		`FROM tag "k8s-cluster" = "c1" TO tag "k8s-cluster" = "c1" ALLOW tcp PORTS 30000 - 32768`: false,
	} {
		if got := sameRuleText(base, text); got != same {
			t.Errorf("sameRuleText(%q) = %v, want %v", text, got, same)
		}
	}
}

func TestFirewallSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		s   FirewallSettings
		err string
	}{
		{FirewallSettings{}, ""},
		{FirewallSettings{NodePortRange: "30000-32767", Resync: time.Minute}, ""},
		{FirewallSettings{NodePortRange: " 1 - 65535 "}, ""},
		{FirewallSettings{NodePortRange: "30000"}, "TRITON_FIREWALL_NODEPORT_RANGE"},
		{FirewallSettings{NodePortRange: "32767-30000"}, "TRITON_FIREWALL_NODEPORT_RANGE"},
		{FirewallSettings{NodePortRange: "0-100"}, "TRITON_FIREWALL_NODEPORT_RANGE"},
		{FirewallSettings{NodePortRange: "30000-70000"}, "TRITON_FIREWALL_NODEPORT_RANGE"},
		{FirewallSettings{NodePortRange: "a-b"}, "TRITON_FIREWALL_NODEPORT_RANGE"},
		{FirewallSettings{Resync: time.Millisecond}, "TRITON_FIREWALL_RESYNC"},
		{FirewallSettings{Resync: -time.Second}, "TRITON_FIREWALL_RESYNC"},
	} {
		err := tc.s.validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%+v: %v", tc.s, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: error %v, want one naming %s", tc.s, err, tc.err)
		}
	}
	if got := (&FirewallSettings{}).resync(); got != defaultFirewallResync {
		t.Errorf("default resync %s", got)
	}
}
