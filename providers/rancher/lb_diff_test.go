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

func TestLaunchChangesGlobal(t *testing.T) {
	ports := []string{"80:80/tcp"}
	plain := &rancher.LaunchConfig{Ports: ports, Labels: map[string]any{"io.rancher.container.pull_image": "always"}}
	global := &rancher.LaunchConfig{Ports: ports, Labels: map[string]any{labelGlobal: "true"}}
	for name, tc := range map[string]struct {
		have *rancher.LaunchConfig
		want bool
		diff []string
	}{
		"not global, as the existing CCM made it": {have: plain},
		"global kept":  {have: global, want: true},
		"switched on":  {have: plain, want: true, diff: []string{"global"}},
		"switched off": {have: global, diff: []string{"global"}},
	} {
		if got := launchChanges(tc.have, &desiredLB{ports: ports, global: tc.want}); !slices.Equal(got, tc.diff) {
			t.Errorf("%s: changes %q, want %q", name, got, tc.diff)
		}
	}
	// The upgrade's launchConfig sets or drops the label alone, and leaves
	// the load balancer's own map as it was.
	lc := launchConfig(plain, &desiredLB{ports: ports, global: true}, "")
	if !isGlobal(lc) || lc.Labels["io.rancher.container.pull_image"] != "always" || isGlobal(plain) {
		t.Errorf("switching on: labels %v (the current ones now %v)", lc.Labels, plain.Labels)
	}
	if lc := launchConfig(global, &desiredLB{ports: ports}, ""); isGlobal(lc) || !isGlobal(global) {
		t.Errorf("switching off: labels %v (the current ones now %v)", lc.Labels, global.Labels)
	}
}

func TestServiceUpdates(t *testing.T) {
	cfg := &rancher.LbConfig{PortRules: []rancher.PortRule{{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceId: "1s2"}}}
	have := &rancher.LoadBalancerService{LbConfig: cfg, Scale: 1}
	for name, tc := range map[string]struct {
		have *rancher.LoadBalancerService
		want *desiredLB
		diff []string
	}{
		"scale left to Cattle":         {have: &rancher.LoadBalancerService{LbConfig: cfg, Scale: 3}, want: &desiredLB{}},
		"same scale":                   {have: have, want: &desiredLB{scale: 1}},
		"no scale shown is Cattle's 1": {have: &rancher.LoadBalancerService{LbConfig: cfg}, want: &desiredLB{scale: 1}},
		"scale up":                     {have: have, want: &desiredLB{scale: 2}, diff: []string{"scale"}},
		"global ignores scale":         {have: have, want: &desiredLB{scale: 2, global: true}},
		"rules and scale in one PUT":   {have: &rancher.LoadBalancerService{Scale: 1}, want: &desiredLB{scale: 2}, diff: []string{"port rules", "scale"}},
	} {
		updates, changes := serviceUpdates(tc.have, tc.want, cfg)
		if !slices.Equal(changes, tc.diff) || (len(changes) == 0) != (updates == nil) {
			t.Errorf("%s: changes %q (updates %v), want %q", name, changes, updates, tc.diff)
		}
		if slices.Contains(tc.diff, "scale") && updates["scale"] != tc.want.scale {
			t.Errorf("%s: updates %v, want scale %d", name, updates, tc.want.scale)
		}
	}
}
