package tritonsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/joyent/triton-go/compute"
)

// cnsNodes seeds three workers in service k8s-c1-nodes (port 30080) and
// returns them.
func cnsNodes(s *Server) []Machine {
	var out []Machine
	for _, name := range []string{"w1", "w2", "w3"} {
		out = append(out, s.AddMachine(Machine{Name: name, Tags: map[string]any{TagCNSServices: "k8s-c1-nodes:30080"}}))
	}
	return out
}

func TestCNSNamesAndResolution(t *testing.T) {
	s, c := setup(t, Options{})
	nodes := cnsNodes(s)
	acct := s.AccountID()
	pub, priv := "us-east-1.triton.zone", "us-east-1.cns.joyent.com"

	got, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: nodes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		nodes[0].ID + ".inst." + acct + "." + pub, "w1.inst." + acct + "." + priv,
		"k8s-c1-nodes.svc." + acct + "." + pub, "k8s-c1-nodes.svc." + acct + "." + priv,
	} {
		if !slices.Contains(got.DomainNames, want) {
			t.Errorf("dns_names %v lack %s", got.DomainNames, want)
		}
	}

	svcPriv := "k8s-c1-nodes.svc." + acct + "." + priv
	ips := func(i int, public bool) string { return nodes[i].NICs[map[bool]int{true: 0, false: 1}[public]].IP }
	if r := s.Resolve(svcPriv); !slices.Equal(r, sorted(ips(0, false), ips(1, false), ips(2, false))) {
		t.Fatalf("private service = %v", r)
	}
	if r := s.Resolve("k8s-c1-nodes.svc." + acct + "." + pub); !slices.Equal(r, sorted(ips(0, true), ips(1, true), ips(2, true))) {
		t.Fatalf("public service = %v", r)
	}

	// Drained (metadata down), stopped and disabled machines leave the
	// service; the drained and stopped keep their instance names.
	s.SetMetadata(nodes[0].ID, MetadataCNSStatus, "down")
	s.SetMachineState(nodes[1].ID, StateStopped)
	if r := s.Resolve(svcPriv); !slices.Equal(r, []string{ips(2, false)}) {
		t.Fatalf("service after drain and stop = %v", r)
	}
	if r := s.Resolve("w1.inst." + acct + "." + priv); !slices.Equal(r, []string{ips(0, false)}) {
		t.Fatalf("drained instance name = %v", r)
	}
	s.SetTags(nodes[2].ID, map[string]any{TagCNSDisable: true})
	if r := s.Resolve(svcPriv); len(r) != 0 {
		t.Fatalf("service with every member out = %v", r)
	}
	if r := s.Resolve(nodes[2].ID + ".inst." + acct + "." + priv); len(r) != 0 {
		t.Fatalf("disabled instance = %v", r)
	}
	s.SetMetadata(nodes[0].ID, MetadataCNSStatus, "up")
	if r := s.Resolve(svcPriv); !slices.Equal(r, []string{ips(0, false)}) {
		t.Fatalf("after up again = %v", r)
	}

	// The SRV records and machines through /_sim/cns.
	resp := get(t, s.URL()+"/_sim/cns?name="+url.QueryEscape(svcPriv))
	var rec CNSRecords
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.SRV) != 1 || rec.SRV[0].Port != 30080 || rec.SRV[0].Target != nodes[0].ID+".inst."+acct+"."+priv ||
		!slices.Equal(rec.Machines, []string{nodes[0].ID}) {
		t.Fatalf("/_sim/cns = %+v", rec)
	}
	if resp := get(t, s.URL()+"/_sim/cns?name=example.com"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a foreign name: %d", resp.StatusCode)
	}
}

func TestCNSAccountFlag(t *testing.T) {
	s := NewServer(t, Options{CNSDisabled: true})
	nodes := cnsNodes(s)
	s.AddMachine(Machine{Name: "mail", Tags: map[string]any{TagCNSReversePTR: "mail.example.com", TagCNSServices: "mx"}})
	acct := s.AccountID()
	if r := s.Resolve("k8s-c1-nodes.svc." + acct + ".us-east-1.cns.joyent.com"); len(r) != 0 {
		t.Fatalf("service with CNS off = %v", r)
	}
	if r := s.Resolve(nodes[0].ID + ".inst." + acct + ".us-east-1.cns.joyent.com"); len(r) != 0 {
		t.Fatalf("instance with CNS off = %v", r)
	}
	if r := s.Resolve("mail.inst." + acct + ".us-east-1.triton.zone"); len(r) != 1 {
		t.Fatalf("reverse_ptr instance with CNS off = %v", r)
	}
	if r := s.Resolve("mx.svc." + acct + ".us-east-1.triton.zone"); len(r) != 0 {
		t.Fatalf("reverse_ptr service with CNS off = %v", r)
	}
	s.SetCNSEnabled(true)
	if r := s.Resolve("k8s-c1-nodes.svc." + acct + ".us-east-1.cns.joyent.com"); len(r) != 3 {
		t.Fatalf("service with CNS on = %v", r)
	}
}

func TestFabricOnlyMachineHasNoPublicName(t *testing.T) {
	s := NewServer(t, Options{})
	fabric := s.State().Networks[1].ID
	m := s.AddMachine(Machine{Name: "inner", NICs: []NIC{{Network: fabric}}})
	acct := s.AccountID()
	if r := s.Resolve("inner.inst." + acct + ".us-east-1.triton.zone"); len(r) != 0 {
		t.Fatalf("public name of a fabric-only machine = %v", r)
	}
	if r := s.Resolve("inner.inst." + acct + ".us-east-1.cns.joyent.com"); !slices.Equal(r, []string{m.NICs[0].IP}) {
		t.Fatalf("private name = %v", r)
	}
	if got, _ := s.Machine(m.ID); got.NICs[0].IP == "" || s.State().Machines[0].NICs[0].Primary != true {
		t.Fatalf("nic %+v", got.NICs)
	}
}

func sorted(v ...string) []string {
	slices.Sort(v)
	return v
}

// The index LoadBalancers reads members from answers every name as
// resolve does: service names of both zones, with machines drained,
// stopped and disabled, instance names, other accounts', foreign names.
func TestCNSIndexIsResolve(t *testing.T) {
	s := NewServer(t, Options{})
	nodes := cnsNodes(s)
	s.AddMachine(Machine{Name: "w4", Tags: map[string]any{TagCNSServices: "k8s-c1-nodes:30080,web:80,web:81"}})
	s.AddMachine(Machine{Name: "w5", Tags: map[string]any{TagCNSServices: "Upper:1"}})
	s.SetMetadata(nodes[0].ID, MetadataCNSStatus, "down")
	s.SetMachineState(nodes[1].ID, StateStopped)
	acct := s.AccountID()
	var names []string
	for _, zone := range []string{"us-east-1.triton.zone", "us-east-1.cns.joyent.com"} {
		for _, label := range []string{"k8s-c1-nodes", "web", "Upper", "upper", "none"} {
			names = append(names, label+".svc."+acct+"."+zone, label+".svc."+acct+"."+zone+".", label+".svc.other-account."+zone)
		}
		names = append(names, "w3.inst."+acct+"."+zone, nodes[0].ID+".inst."+acct+"."+zone, "a.b.svc."+acct+"."+zone)
	}
	names = append(names, "example.com", "")
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &cnsIndex{st: s.st}
	for _, name := range names {
		rec, _ := s.st.resolve(name)
		want := rec.Machines
		if len(want) == 0 {
			want = nil
		}
		if got := x.machines(name); !slices.Equal(got, want) {
			t.Errorf("%q: index %v, resolve %v", name, got, want)
		}
	}
	if got := x.machines("web.svc." + acct + ".us-east-1.cns.joyent.com"); len(got) != 1 {
		t.Errorf("web: %v, want one machine (listed twice)", got)
	}
}
