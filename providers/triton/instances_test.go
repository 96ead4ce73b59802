package triton_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// A machine maps to a Node: package as the type, the datacenter as the
// zone, the region derived from it, the compute node as a label, the
// public NIC's IP as ExternalIP and the fabric one's as InternalIP, the CNS
// names split by zone, its name as Hostname; stopped is shutdown, offline
// is not.
func TestInstanceMetadata(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{Datacenter: "us-east-3b"})
	m := sim.AddMachine(tritonsim.Machine{Name: "node-1", State: tritonsim.StateStopped})
	p := mustStart(t, sim, nil)
	inst, err := p.Instances().InstanceByID(ctx(t), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Type != m.Package || inst.Zone != "us-east-3b" || inst.Region != "us-east" || !inst.Shutdown || inst.Name != "node-1" {
		t.Errorf("instance = %+v; want type %s, zone us-east-3b, region us-east, shutdown", inst, m.Package)
	}
	if got := inst.Labels["triton.tritondatacenter.com/compute-node"]; got == "" || got != m.ComputeNode {
		t.Errorf("compute-node label = %q, want %q", got, m.ComputeNode)
	}
	var want []corev1.NodeAddress
	for _, nic := range m.NICs {
		kind := corev1.NodeInternalIP
		if n, _ := networkOf(sim, nic.Network); n.Public {
			kind = corev1.NodeExternalIP
		}
		want = append(want, corev1.NodeAddress{Type: kind, Address: nic.IP})
	}
	got := map[corev1.NodeAddressType][]string{}
	for _, a := range inst.Addresses {
		got[a.Type] = append(got[a.Type], a.Address)
	}
	for _, w := range want {
		if !contains(got[w.Type], w.Address) {
			t.Errorf("addresses %v lack %v", inst.Addresses, w)
		}
	}
	if len(got[corev1.NodeExternalDNS]) == 0 || len(got[corev1.NodeInternalDNS]) == 0 || !cmp.Equal(got[corev1.NodeHostName], []string{"node-1"}) {
		t.Errorf("addresses %v: want CNS names in both zones and the hostname", inst.Addresses)
	}
	sim.SetMachineState(m.ID, tritonsim.StateOffline)
	if inst, err = p.Instances().InstanceByID(ctx(t), m.ID); err != nil || inst.Shutdown {
		t.Errorf("offline machine: %+v, %v; want it up (its compute node is unreachable)", inst, err)
	}
}

func networkOf(sim *tritonsim.Server, id string) (tritonsim.Network, bool) {
	for _, n := range sim.State().Networks {
		if n.ID == id {
			return n, true
		}
	}
	return tritonsim.Network{}, false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A deleted machine is not found while CloudAPI answers 410 Gone with it,
// and after its history is purged (404); so is a failed one. A Node named
// after a machine finds it by name.
func TestInstanceNotFound(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{GoneReads: 1})
	gone := sim.AddMachine(tritonsim.Machine{Name: "gone"})
	failed := sim.AddMachine(tritonsim.Machine{Name: "failed", State: tritonsim.StateFailed})
	live := sim.AddMachine(tritonsim.Machine{Name: "live"})
	p := mustStart(t, sim, nil)
	sim.DeleteMachine(gone.ID)
	for _, read := range []string{"410", "404"} {
		if _, err := p.Instances().InstanceByID(ctx(t), gone.ID); !framework.IsNotFound(err) {
			t.Errorf("deleted machine (%s): err = %v, want not found", read, err)
		}
	}
	if _, err := p.Instances().InstanceByID(ctx(t), failed.ID); !framework.IsNotFound(err) {
		t.Errorf("failed machine: err = %v, want not found", err)
	}
	if _, err := p.Instances().InstanceByName(ctx(t), "gone"); !framework.IsNotFound(err) {
		t.Errorf("by name, deleted: err = %v, want not found", err)
	}
	if inst, err := p.Instances().InstanceByName(ctx(t), "live"); err != nil || inst.ID != live.ID {
		t.Errorf("by name: %+v, %v; want %s", inst, err, live.ID)
	}
}

// An outage is never a not-found: a 500, a 401, a proxy's HTML 404 or a
// 404 without CloudAPI's ResourceNotFound code is an error, so no Node is
// deleted.
func TestInstanceOutageIsAnError(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	m := sim.AddMachine(tritonsim.Machine{Name: "node-1"})
	p := mustStart(t, sim, nil)
	faults := []simkit.Fault{
		{Status: http.StatusInternalServerError},
		{Status: http.StatusUnauthorized, Code: "InvalidCredentials"},
		{Status: http.StatusNotFound, Body: "<html>Not Found</html>", ContentType: "text/html"},
		{Status: http.StatusNotFound, Code: "NotFound"},
	}
	for _, f := range faults {
		t.Run(fmt.Sprintf("%d %s%s", f.Status, f.Code, f.ContentType), func(t *testing.T) {
			f.Op = "GET /{account}/machines/{id}"
			remove := sim.Inject(f)
			defer remove()
			_, err := p.Instances().InstanceByID(ctx(t), m.ID)
			if err == nil || framework.IsNotFound(err) || errors.Is(err, framework.ErrNotFound) {
				t.Errorf("err = %v, want an error that is not not-found", err)
			}
		})
	}
}

// Listing N machines costs ceil(N/1000) machine lists and no NIC read.
func TestListInstancesPages(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	for i := range 1001 {
		sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i)})
	}
	p := mustStart(t, sim, nil)
	before := sim.Stats()
	all, err := p.Instances().ListInstances(ctx(t))
	if err != nil || len(all) != 1001 {
		t.Fatalf("ListInstances = %d instances, %v; want 1001", len(all), err)
	}
	after := sim.Stats()
	for op, n := range after {
		if d := n - before[op]; d != 0 && op != "GET /{account}/machines" && op != "GET /{account}/networks" {
			t.Errorf("%d %s requests; want none", d, op)
		}
	}
	if d := after["GET /{account}/machines"] - before["GET /{account}/machines"]; d != 2 {
		t.Errorf("%d machine lists for 1001 machines, want 2", d)
	}
}

// Initializing 1001 Nodes through InstancesV2, as the node controller does,
// costs two machine lists (1000 a page) within the cache's TTL: no machine
// GET and no NIC read.
func TestNodeInitCost(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	var ids []string
	for i := range 1001 {
		ids = append(ids, sim.AddMachine(tritonsim.Machine{Name: fmt.Sprintf("node-%d", i)}).ID)
	}
	vars := sim.Env(sim.URL())
	cloud, err := framework.NewCloud(ctx(t), triton.New(), &framework.Env{
		LookupEnv:        func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		InstanceCacheTTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	before := sim.Stats()
	for i, id := range ids {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}}
		if i%2 == 0 {
			node.Spec.ProviderID = "triton://" + id
		}
		md, err := inst.InstanceMetadata(ctx(t), node)
		if err != nil || md.ProviderID != "triton://"+id {
			t.Fatalf("InstanceMetadata(%s) = %+v, %v", node.Name, md, err)
		}
	}
	after := sim.Stats()
	for op, n := range after {
		d := n - before[op]
		switch op {
		case "GET /{account}/machines":
			if d != 2 {
				t.Errorf("%d machine lists for 1001 Nodes, want 2", d)
			}
		case "GET /{account}/networks":
		default:
			if d != 0 {
				t.Errorf("%d %s requests; want none", d, op)
			}
		}
	}
}

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// A Node's providerID is triton://<uuid>; triton:///<uuid> names the same
// machine.
func TestProviderIDForms(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	id := sim.AddMachine(tritonsim.Machine{Name: "node-1"}).ID
	vars := sim.Env(sim.URL())
	cloud, err := framework.NewCloud(ctx(t), triton.New(), &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	for _, pid := range []string{"triton://" + id, "triton:///" + id} {
		md, err := inst.InstanceMetadata(ctx(t), node("node-1", pid))
		if err != nil || md.ProviderID != "triton://"+id {
			t.Errorf("InstanceMetadata(%s) = %+v, %v; want providerID triton://%s", pid, md, err, id)
		}
	}
	md, err := inst.InstanceMetadata(ctx(t), node("node-1", ""))
	if err != nil || md.ProviderID != "triton://"+id {
		t.Errorf("InstanceMetadata(no providerID) = %+v, %v; want triton://%s", md, err, id)
	}
}

// A machine whose triton.cns.disable tag is not a boolean (VMAPI forbids
// it, so only a malformed answer has one) makes triton-go's tag decoding
// panic: the lookup, by ID or by list, fails with an error instead.
func TestMalformedTagsAreAnError(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	m := sim.AddMachine(tritonsim.Machine{Name: "node-1"})
	p := mustStart(t, sim, nil)
	sim.SetTags(m.ID, map[string]any{"triton.cns.disable": "yes"})
	if _, err := p.Instances().InstanceByID(ctx(t), m.ID); err == nil || framework.IsNotFound(err) {
		t.Errorf("InstanceByID: err = %v, want a malformed-response error", err)
	}
	if _, err := p.Instances().ListInstances(ctx(t)); err == nil {
		t.Error("ListInstances: no error")
	}
}
