package soak

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// good is a snapshot that breaks nothing: two Services (one LoadBalancer
// with its LB, one turned ClusterIP), three running Nodes, one Node whose
// VM was deleted (and the CCM deleted the Node), one shut down.
func good() Snapshot {
	return Snapshot{
		Nodes: []Node{
			{Name: "node-0", Initialized: true}, {Name: "node-1", Initialized: true},
			{Name: "node-2", Initialized: true, Excluded: true},
			{Name: "node-4", Initialized: true, ShutdownTaint: true},
		},
		Services: []Service{
			{Name: "web", LoadBalancer: true, LBID: "lb-1", Ports: []ServicePort{{80, 30080}, {443, 30443}}, Ingress: []string{"203.0.113.1"}},
			{Name: "old", LBID: "lb-gone"},
		},
		LoadBalancers: []simkit.LoadBalancer{{
			ID: "lb-1", Listeners: []string{"TCP:443->:30443", "TCP:80->:30080"},
			Members: []string{"vm-0", "vm-1", "vm-4"}, Addresses: []string{"203.0.113.1"},
		}},
		Companions: map[string]string{"fip/1": "lb-1", "fip/old": ""},
		Baseline:   map[string]string{"fip/old": ""},
		Record: Record{
			VMs:           map[string]string{"node-0": "vm-0", "node-1": "vm-1", "node-2": "vm-2", "node-3": "vm-3", "node-4": "vm-4"},
			VMsDeleted:    map[string]bool{"node-3": true},
			VMsShutdown:   map[string]bool{"node-4": true},
			NodesDeleted:  map[string]bool{},
			NodeDeletions: []string{"node-3"},
		},
	}
}

func TestCheckGoodSnapshot(t *testing.T) {
	if v := Check(good()); len(v) != 0 {
		t.Fatalf("violations in a good snapshot: %v", v)
	}
}

// wantOnly checks that s breaks invariant inv and nothing else.
func wantOnly(t *testing.T, s Snapshot, inv string) {
	t.Helper()
	v := Check(s)
	if len(v) == 0 {
		t.Fatalf("no violation; want %q", inv)
	}
	for _, x := range v {
		if x.Invariant != inv {
			t.Errorf("violation %q; want only %q", x, inv)
		}
	}
}

func TestCheckNodeDeletedWhoseVMExists(t *testing.T) {
	s := good()
	// Deleted by the CCM and back again (the kubelet re-registered): still
	// a violation.
	s.Record.NodeDeletions = append(s.Record.NodeDeletions, "node-1")
	wantOnly(t, s, InvNodeDeleted)
	// The soak's own deletion is not one.
	s.Record.NodesDeleted["node-1"] = true
	if v := Check(s); len(v) != 0 {
		t.Fatalf("the soak's own Node deletion reported: %v", v)
	}
}

func TestCheckNodeOfDeletedVMStays(t *testing.T) {
	s := good()
	s.Nodes = append(s.Nodes, Node{Name: "node-3", Initialized: true})
	wantOnly(t, s, InvGoneVMNode)
}

func TestCheckShutdownNode(t *testing.T) {
	s := good()
	s.Nodes[3].ShutdownTaint = false
	wantOnly(t, s, InvShutdownNode)
	s = good()
	s.Nodes = s.Nodes[:3]
	s.LoadBalancers[0].Members = []string{"vm-0", "vm-1"}
	wantOnly(t, s, InvShutdownNode)
}

func TestCheckExactlyOneLB(t *testing.T) {
	s := good()
	s.LoadBalancers = append(s.LoadBalancers, s.LoadBalancers[0])
	wantOnly(t, s, InvOneLB)
	s = good()
	s.Services[0].LBID = ""
	v := Check(s)
	if len(v) != 2 || v[0].Invariant != InvOneLB || v[1].Invariant != InvOrphanLB {
		t.Fatalf("a Service without its ID: %v; want %q and %q", v, InvOneLB, InvOrphanLB)
	}
}

func TestCheckListeners(t *testing.T) {
	s := good()
	s.Services[0].Ports[1].NodePort = 31000
	wantOnly(t, s, InvListeners)
	// The protocol's name does not matter, a UDP twin of a port neither.
	s = good()
	s.LoadBalancers[0].Listeners = []string{"HTTP:80->:30080", "TCP:443->:30443", "UDP:443->:30443"}
	if v := Check(s); len(v) != 0 {
		t.Fatalf("listeners compared by protocol: %v", v)
	}
}

func TestCheckMembers(t *testing.T) {
	for name, members := range map[string][]string{
		"missing":  {"vm-0"},
		"excluded": {"vm-0", "vm-1", "vm-2"},
		"deleted":  {"vm-0", "vm-1", "vm-3"},
	} {
		t.Run(name, func(t *testing.T) {
			s := good()
			s.LoadBalancers[0].Members = members
			wantOnly(t, s, InvMembers)
		})
	}
	s := good()
	s.LoadBalancers[0].Members = []string{"vm-0", "vm-1"} // the shut-down VM may be out
	if v := Check(s); len(v) != 0 {
		t.Fatalf("a shut-down VM left out: %v", v)
	}
	s.Nodes[1].Initialized = false // an uninitialized Node must not be in
	wantOnly(t, s, InvMembers)
}

func TestCheckOrphanLB(t *testing.T) {
	s := good()
	s.LoadBalancers = append(s.LoadBalancers, simkit.LoadBalancer{ID: "lb-2"})
	wantOnly(t, s, InvOrphanLB)
}

func TestCheckOrphanCompanion(t *testing.T) {
	s := good()
	s.Companions["fip/2"] = ""
	wantOnly(t, s, InvOrphanCompanion)
	s = good()
	s.Companions["fip/3"] = "lb-gone"
	wantOnly(t, s, InvOrphanCompanion)
}

// TestCheckCompanionOfRefusedService: a companion no load balancer uses
// is no leak while the Service it is named for is refused, with no load
// balancer (a create failed after making it, then the Service turned
// invalid) or with one not yet set up (the long Brightbox soak: a cloud
// IP the create allocated, which the first update maps); it is once the
// Service is valid, or when the companion is named for no such Service.
func TestCheckCompanionOfRefusedService(t *testing.T) {
	refused := func() Snapshot {
		s := good()
		s.Services = append(s.Services, Service{Name: "bad", LBName: "a0123456789abcdef", LoadBalancer: true, Invalid: "annotation x=abc", Warned: true})
		s.Companions["ext/9"] = ""
		s.CompanionNames = map[string]string{"ext/9": "lb-a0123456789abcdef-nodes", "fip/1": "lb-a1-nodes"}
		return s
	}
	if v := Check(refused()); len(v) != 0 {
		t.Errorf("the companion of a Service refused before its load balancer: %v, want none", v)
	}
	withLB := refused()
	withLB.LoadBalancers = append(withLB.LoadBalancers, simkit.LoadBalancer{ID: "lb-9", Name: "bad.default.kubernetes"})
	withLB.Services[2].LBID = "lb-9"
	withLB.CompanionNames["ext/9"] = "bad.default.kubernetes"
	if v := Check(withLB); len(v) != 0 {
		t.Errorf("the companion of a Service refused before its load balancer was set up: %v, want none", v)
	}
	for name, mutate := range map[string]func(*Snapshot){
		"valid again":        func(s *Snapshot) { s.Services[2].Invalid = "" },
		"not a LoadBalancer": func(s *Snapshot) { s.Services[2].LoadBalancer = false },
		"named for another":  func(s *Snapshot) { s.CompanionNames["ext/9"] = "lb-a999-nodes" },
		"named for another's LB": func(s *Snapshot) {
			s.Services[2].LBID = s.Services[0].LBID
			s.CompanionNames["ext/9"] = "other.default.kubernetes"
		},
		"no names": func(s *Snapshot) { s.CompanionNames = nil },
	} {
		s := refused()
		mutate(&s)
		v := Check(s)
		if !slices.ContainsFunc(v, func(x Violation) bool { return x.Invariant == InvOrphanCompanion }) {
			t.Errorf("%s: %v, want %q", name, v, InvOrphanCompanion)
		}
	}
}

func TestCheckStatus(t *testing.T) {
	s := good()
	s.Services[0].Ingress = []string{"203.0.113.9"}
	wantOnly(t, s, InvStatus)
	s.Services[0].Ingress = nil
	wantOnly(t, s, InvStatus)
}

func TestCheckNotLoadBalancer(t *testing.T) {
	s := good()
	s.Services[1].Ingress = []string{"203.0.113.1"}
	wantOnly(t, s, InvNotLB)
	s = good()
	s.Services[0].LoadBalancer = false
	s.Services[0].Ingress = nil
	v := Check(s)
	if len(v) != 1 || v[0].Invariant != InvNotLB || !strings.Contains(v[0].Detail, "lb-1 stays") {
		t.Fatalf("a ClusterIP Service's LB left behind: %v", v)
	}
}

func TestCheckInvalidService(t *testing.T) {
	s := good()
	s.Services[0].Invalid = "annotation x=abc"
	s.Services[0].Ports = []ServicePort{{8080, 30808}} // not converged: allowed
	wantOnly(t, s, InvInvalidWarned)
	s.Services[0].Warned = true
	if v := Check(s); len(v) != 0 {
		t.Fatalf("an invalid Service that was warned about: %v", v)
	}
}
