package gbsim

import (
	"os"
	"strings"
	"testing"
)

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/brightbox.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	c := connect(t, s)
	lbs, err := c.LoadBalancers(ctx())
	if err != nil || len(lbs) != 1 {
		t.Fatalf("load balancers = %+v, %v", lbs, err)
	}
	lb := lbs[0]
	if lb.Name != "web.default.kubernetes" || len(lb.Nodes) != 2 || len(lb.CloudIPs) != 1 {
		t.Errorf("load balancer = %q, %d nodes, %d cloud IPs", lb.Name, len(lb.Nodes), len(lb.CloudIPs))
	}
	policies, err := c.FirewallPolicies(ctx())
	if err != nil || len(policies) != 2 || policies[1].ServerGroup == nil || len(policies[1].Rules) != 1 {
		t.Fatalf("firewall policies = %+v, %v", policies, err)
	}
	if env := s.Env(s.URL()); env["BRIGHTBOX_CLIENT_SECRET"] != "cloudsim-secret" || env["BRIGHTBOX_ACCOUNT"] != "acc-43ks4" {
		t.Errorf("env = %v", env)
	}
}

func TestScenarioErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":      {"servrs: []", `unknown field "servrs"`},
		"other provider":   {"provider: digitalocean", "provider"},
		"bad zone":         {"servers: [{name: a, zone: gb9-z}]", `zone: "gb9-z" is not one of gb1-a, gb1-b`},
		"unknown node":     {"loadBalancers: [{name: x, listeners: [{protocol: tcp, in: 80, out: 80}], healthcheck: {type: tcp, port: 80}, nodes: [b]}]", `no "b" in the scenario`},
		"bad policy":       {"loadBalancers: [{name: x, policy: fastest, listeners: [{protocol: tcp, in: 80, out: 80}], healthcheck: {type: tcp, port: 80}}]", `policy: "fastest"`},
		"bad fault op":     {"faults: [{operation: nope.list, status: 500}]", "unknown operation"},
		"bad TTL":          {"tokenTTL: soon", "tokenTTL"},
		"rule without end": {"firewallPolicies: [{name: p, rules: [{protocol: tcp}]}]", "source or a destination"},
	} {
		_, err := NewFromScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}
