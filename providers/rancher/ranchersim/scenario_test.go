package ranchersim

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/rancher.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	lb, ok := s.ServiceByName("lb-a8c3f1e2d4b5611e8b0c2c4d5e6f7a8b")
	if !ok || lb.State != StateActive || len(lb.Links) != 2 || lb.LBConfig.PortRules[1].ServiceID != lb.Links[1].ServiceID {
		t.Errorf("LB = %+v", lb)
	}
	if eps := s.Endpoints(lb.ID); len(eps) != 1 || eps[0].IPAddress != "10.0.0.11" || eps[0].Port != 80 {
		t.Errorf("endpoints = %+v (scale 1: the first active host)", eps)
	}
}

func TestScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"provider: triton", "provider"},
		{"hosts: [{hostname: a, state: exploded}]", "host state"},
		{"services: [{name: x, stack: nope}]", "no stack"},
		{"stacks: [{name: s}]\nservices: [{name: x, stack: s, links: [zz]}]", "no service \"zz\""},
		{"stacks: [{name: s}]\nservices: [{name: x, stack: s, state: bogus}]", "state"},
		{"stacks: [{name: s}]\nservices: [{name: x, stack: s, launchConfig: {ports: [\"80:80/sctp\"]}}]", "ports"},
		{"faults: [{operation: nope, status: 500}]", "unknown operation"},
		{"hostz: []", "unknown field"},
	} {
		_, err := LoadScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one about %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := LoadScenario([]byte("faults: [{operation: hosts.list, status: 503, count: 1}]")); err != nil {
		t.Errorf("a fault by short name: %v", err)
	}
}

// TestScenarioAPIKeys: a scenario registers more environment API keys
// than the one cmd/cloudsim prints (apiKeys), each an access key and its
// secret, as a Rancher environment holds several API keys.
func TestScenarioAPIKeys(t *testing.T) {
	s, err := NewFromScenario([]byte(`
accessKey: FIRSTKEY
secretKey: first-secret
apiKeys:
- {accessKey: SECONDKEY, secretKey: second-secret}
- {accessKey: THIRDKEY, secretKey: third-secret}
`))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	for _, k := range [][2]string{{"FIRSTKEY", "first-secret"}, {"SECONDKEY", "second-secret"}, {"THIRDKEY", "third-secret"}} {
		if _, err := connectAs(t, s.ProjectURL(s.URL()), k[0], k[1]).Host.List(nil); err != nil {
			t.Errorf("key %s: %v", k[0], err)
		}
	}
	if a := callAs(t, "SECONDKEY", "first-secret", http.MethodGet, s.ProjectURL(s.URL())+"/hosts", ""); a.status != http.StatusUnauthorized {
		t.Errorf("SECONDKEY with another key's secret: %d, want 401", a.status)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"apiKeys: [{accessKey: A}]", "apiKeys[0].secretKey"},
		{"apiKeys: [{secretKey: s}]", "apiKeys[0].accessKey"},
		{"apiKeys: [{accessKey: A, secretKey: s}, {accessKey: A, secretKey: t}]", "apiKeys[1].accessKey"},
		{"accessKey: A\nsecretKey: s\napiKeys: [{accessKey: A, secretKey: t}]", "apiKeys[0].accessKey"},
		{"apiKeys: [{accessKey: A, secretKey: s, role: admin}]", "unknown field"},
	} {
		if _, err := LoadScenario([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one about %q", tc.yaml, err, tc.want)
		}
	}
}
