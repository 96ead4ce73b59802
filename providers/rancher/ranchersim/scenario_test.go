package ranchersim

import (
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
