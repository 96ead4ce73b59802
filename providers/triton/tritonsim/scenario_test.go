package tritonsim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
)

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/triton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	data = []byte(strings.Replace(string(data), "/tmp/tritonsim-ccmkit.pem", keyFile, 1))
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	env := s.Env(s.URL())
	if env["TRITON_KEY_MATERIAL"] != keyFile || env["TRITON_ACCOUNT"] != "ccmkit" {
		t.Fatalf("env %v", env)
	}
	if pem, err := os.ReadFile(keyFile); err != nil || string(pem) != string(s.AccountKeyPEM()) {
		t.Fatalf("key file: %v", err)
	}
	c := connect(t, s)
	machines, err := c.compute.Instances().List(ctx(), &compute.ListInstancesInput{Tags: map[string]any{"k8s-cluster": "kubernetes"}})
	if err != nil || len(machines) != 4 {
		t.Fatalf("machines %d, %v", len(machines), err)
	}
	if machines[2].State != StateStopped || machines[0].Package != "g4-highcpu-4G" {
		t.Fatalf("worker-3 %s, worker-1 %s", machines[2].State, machines[0].Package)
	}
	lbs := s.Cloud().LoadBalancers()
	if len(lbs) != 1 || !slices.Equal(lbs[0].Listeners, []string{"TCP:80->:31080"}) ||
		!slices.Equal(lbs[0].Members, sorted(machines[0].ID, machines[1].ID)) {
		t.Fatalf("load balancers %+v", lbs)
	}
	rules, err := c.network.Firewall().ListRules(ctx(), &network.ListRulesInput{})
	if err != nil || len(rules) != 1 || !rules[0].Enabled {
		t.Fatalf("rules %+v, %v", rules, err)
	}
}

func TestScenarioErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":     {"machnes: []", `unknown field "machnes"`},
		"other provider":  {"provider: brightbox", "provider"},
		"bad state":       {"machines: [{name: a, state: exploded}]", `state "exploded"`},
		"unknown package": {"machines: [{name: a, package: g9}]", `package "g9" does not exist`},
		"unknown image":   {"machines: [{name: a, image: nope}]", `image "nope" does not exist`},
		"unknown network": {"machines: [{name: a, networks: [nope]}]", `network "nope" does not exist`},
		"bad triton tag":  {"machines: [{name: a, tags: {triton.foo: x}}]", `Unrecognized special triton tag "triton.foo"`},
		"bad rule":        {"fwrules: [{rule: garbage}]", "fwrules[0]"},
		"bad fault op":    {"faults: [{operation: nope.list, status: 500}]", "unknown operation"},
		"bad account ID":  {"accountID: nope", "accountID"},
	} {
		_, err := LoadScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}
