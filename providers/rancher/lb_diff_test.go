package rancher

import (
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

func TestLaunchChanges(t *testing.T) {
	have := &rancher.LaunchConfig{Ports: []string{"80:80/tcp", "53:53/udp"}, ImageUuid: "docker:lb:1"}
	for name, tc := range map[string]struct {
		want *desiredLB
		diff []string
	}{
		"same, another order":      {want: &desiredLB{ports: []string{"53:53/udp", "80:80/tcp"}}},
		"image left to Cattle":     {want: &desiredLB{ports: []string{"53:53/udp", "80:80/tcp"}, image: ""}},
		"same image":               {want: &desiredLB{ports: []string{"53:53/udp", "80:80/tcp"}, image: "docker:lb:1"}},
		"port added, image change": {want: &desiredLB{ports: []string{"53:53/udp", "80:80/tcp", "81:81/tcp"}, image: "docker:lb:2"}, diff: []string{"ports", "image"}},
		"protocol change":          {want: &desiredLB{ports: []string{"53:53/tcp", "80:80/tcp"}}, diff: []string{"ports"}},
	} {
		if got := launchChanges(have, tc.want); !slices.Equal(got, tc.diff) {
			t.Errorf("%s: changes %q, want %q", name, got, tc.diff)
		}
	}
}

func TestLbConfigChanges(t *testing.T) {
	want := &rancher.LbConfig{PortRules: []rancher.PortRule{
		{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceId: "1s2"},
		{SourcePort: 53, TargetPort: 30053, Protocol: "udp", ServiceId: "1s2"},
	}}
	// As Cattle answers: its own order, priorities filled in.
	have := &rancher.LbConfig{PortRules: []rancher.PortRule{
		{SourcePort: 53, TargetPort: 30053, Protocol: "udp", ServiceId: "1s2", Priority: 1},
		{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceId: "1s2", Priority: 2},
	}}
	if got := lbConfigChanges(have, want); len(got) != 0 {
		t.Errorf("same rules: changes %q, want none", got)
	}
	moved := *have
	moved.PortRules = slices.Clone(have.PortRules)
	moved.PortRules[0].ServiceId = "1s1"
	if got := lbConfigChanges(&moved, want); !slices.Equal(got, []string{"port rules"}) {
		t.Errorf("a rule to another service: changes %q, want port rules", got)
	}
	sticky := *want
	sticky.StickinessPolicy = &rancher.LoadBalancerCookieStickinessPolicy{Cookie: "S", Mode: "insert"}
	sticky.DefaultCertificateId = "1c1"
	if got := lbConfigChanges(have, &sticky); !slices.Equal(got, []string{"default certificate", "stickiness"}) {
		t.Errorf("stickiness and a certificate: changes %q", got)
	}
	if got := lbConfigChanges(nil, want); !slices.Equal(got, []string{"port rules"}) {
		t.Errorf("no lbConfig: changes %q, want port rules", got)
	}
	if ids := ruleServiceIDs(&moved); !slices.Equal(ids, []string{"1s1", "1s2"}) {
		t.Errorf("ruleServiceIDs = %q", ids)
	}
}
