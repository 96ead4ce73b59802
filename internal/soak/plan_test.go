package soak

import (
	"reflect"
	"strings"
	"testing"
)

var testCaps = Capabilities{
	UDP:          true,
	SourceRanges: false,
	Valid:        map[string][]string{"x/interval": {"5", "10"}},
	Invalid:      map[string]string{"x/interval": "abc"},
}

func TestPlanSameSeedSamePlan(t *testing.T) {
	spec := PlanSpec{Seed: 7, Ops: 200, Kills: 10, InitialNodes: 3, Caps: testCaps}
	if a, b := Plan(spec), Plan(spec); !reflect.DeepEqual(a, b) {
		t.Fatal("two plans from the same seed differ")
	}
	other := spec
	other.Seed = 8
	if reflect.DeepEqual(Plan(spec), Plan(other)) {
		t.Fatal("seeds 7 and 8 gave the same plan")
	}
}

func TestPlanHasEveryKind(t *testing.T) {
	ops := Plan(PlanSpec{Seed: 1, Ops: 500, Kills: 10, InitialNodes: 3, Caps: testCaps})
	seen := map[Kind]int{}
	udp := false
	for _, op := range ops {
		seen[op.Kind]++
		for _, p := range op.Ports {
			udp = udp || p.Protocol == "UDP"
		}
	}
	for _, w := range weights {
		if seen[w.kind] == 0 {
			t.Errorf("500 operations hold no %s", w.kind)
		}
	}
	if seen[KillNow] != 5 || seen[KillMid] != 5 {
		t.Errorf("10 kills gave %d now and %d mid-reconcile, want 5 and 5", seen[KillNow], seen[KillMid])
	}
	if len(ops) < 510 {
		t.Errorf("plan holds %d operations, want 500, 10 kills and the fixes at the end", len(ops))
	}
	if !udp {
		t.Error("no UDP port though the provider has UDP")
	}
}

func TestPlanKeepsToWhatTheProviderSupports(t *testing.T) {
	caps := Capabilities{Valid: testCaps.Valid}
	for _, op := range Plan(PlanSpec{Seed: 3, Ops: 500, InitialNodes: 3, Caps: caps}) {
		for _, p := range op.Ports {
			if p.Protocol != "TCP" {
				t.Fatalf("%s: a %s port for a provider without UDP", op, p.Protocol)
			}
		}
		if op.Kind == BreakAnnotation || op.Kind == FixAnnotation {
			t.Fatalf("%s for a provider without invalid annotation examples", op)
		}
	}
}

// TestPlanOperationsApply replays a plan and checks every operation acts
// on something that exists then: the plan is a run's sequence, not a bag.
func TestPlanOperationsApply(t *testing.T) {
	services, nodes := map[string]bool{}, map[string]bool{"node-0": true, "node-1": true, "node-2": true}
	invalid := map[string]bool{}
	for i, op := range Plan(PlanSpec{Seed: 5, Ops: 1000, Kills: 20, InitialNodes: 3, Caps: testCaps}) {
		switch op.Kind {
		case BreakAnnotation:
			invalid[op.Service+" annotation"] = true
		case FixAnnotation, SetAnnotation, DeleteService:
			delete(invalid, op.Service+" annotation")
		}
		switch {
		case op.Kind == SourceRanges && len(op.Ranges) > 0:
			invalid[op.Service+" ranges"] = true
		case op.Kind == SourceRanges || op.Kind == ToClusterIP || op.Kind == DeleteService:
			delete(invalid, op.Service+" ranges")
		}
		switch {
		case op.Kind == CreateService:
			if services[op.Service] {
				t.Fatalf("op %d: %s creates a Service that exists", i, op)
			}
			services[op.Service] = true
		case op.Service != "":
			if !services[op.Service] {
				t.Fatalf("op %d: %s acts on a Service that does not exist", i, op)
			}
			if op.Kind == DeleteService {
				delete(services, op.Service)
			}
		case op.Kind == NodeJoin:
			nodes[op.Node] = true
		case op.Node != "":
			if !nodes[op.Node] {
				t.Fatalf("op %d: %s acts on a Node that is gone or down", i, op)
			}
			delete(nodes, op.Node)
			if len(nodes) < 2 {
				t.Fatalf("op %d: %s leaves %d running Nodes", i, op, len(nodes))
			}
		}
	}
	names := map[string]bool{}
	for k := range invalid {
		names[strings.Fields(k)[0]] = true
	}
	if len(names) > 1 {
		t.Errorf("the plan ends with %d invalid Services (%v), want one at most", len(names), invalid)
	}
}
