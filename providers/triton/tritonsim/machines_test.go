package tritonsim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/joyent/triton-go/compute"
)

func TestGetMachineAndNICs(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{Name: "worker-1", Tags: map[string]any{"k8s-cluster": "c1"}})

	got, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "worker-1" || got.State != StateRunning || got.Package != DefaultPackage || got.Memory != 1024 {
		t.Fatalf("got %+v", got)
	}
	if len(got.IPs) != 2 || got.PrimaryIP != got.IPs[0] || len(got.Networks) != 2 {
		t.Fatalf("addresses: ips %v primary %q networks %v", got.IPs, got.PrimaryIP, got.Networks)
	}
	if got.Created.IsZero() || got.ComputeNode == "" || got.Type != "smartmachine" {
		t.Fatalf("got %+v", got)
	}
	nics, err := c.compute.Instances().ListNICs(ctx(), &compute.ListNICsInput{InstanceID: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(nics) != 2 || !nics[0].Primary || nics[1].Primary || nics[0].IP != got.PrimaryIP || nics[0].Netmask != "255.254.0.0" {
		t.Fatalf("nics %+v", nics)
	}
	nic, err := c.compute.Instances().GetNIC(ctx(), &compute.GetNICInput{InstanceID: m.ID, MAC: nics[1].MAC})
	if err != nil || nic.IP != nics[1].IP {
		t.Fatalf("GetNIC = %+v, %v", nic, err)
	}
	_, err = c.compute.Instances().GetNIC(ctx(), &compute.GetNICInput{InstanceID: m.ID, MAC: "00:00:00:00:00:00"})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
	_, err = c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: "5b0e2ed6-1c2f-4b8e-8c4c-1f6f0c0c0c0c"})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestDeletedMachineIsGoneThenNotFound(t *testing.T) {
	s, c := setup(t, Options{GoneReads: 2})
	m := s.AddMachine(Machine{Name: "worker-1"})
	s.DeleteMachine(m.ID)

	for range 2 {
		got, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
		wantAPIError(t, err, http.StatusGone, "")
		if got == nil || got.ID != m.ID || got.State != StateDeleted {
			t.Fatalf("410 instance = %+v", got)
		}
	}
	_, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
	if _, found := s.Machine(m.ID); found {
		t.Fatal("the purged machine is still held")
	}
}

func TestPurge(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{})
	s.DeleteMachine(m.ID)
	s.Purge(m.ID)
	_, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestListMachinesPagesAndFilters(t *testing.T) {
	s, c := setup(t, Options{})
	var ids []string
	for i := range 5 {
		tags := map[string]any{"role": "worker"}
		if i%2 == 0 {
			tags["k8s-cluster"] = "c1"
		}
		ids = append(ids, s.AddMachine(Machine{Tags: tags}).ID)
	}
	s.SetMachineState(ids[4], StateStopped)
	deleted := s.AddMachine(Machine{})
	s.DeleteMachine(deleted.ID)

	list := func(in compute.ListInstancesInput) []string {
		t.Helper()
		got, err := c.compute.Instances().List(ctx(), &in)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range got {
			out = append(out, m.ID)
		}
		return out
	}
	if got := list(compute.ListInstancesInput{}); !slices.Equal(got, ids) {
		t.Fatalf("all = %v, want %v (no deleted machine)", got, ids)
	}
	if got := list(compute.ListInstancesInput{Limit: 2, Offset: 2}); !slices.Equal(got, ids[2:4]) {
		t.Fatalf("page = %v, want %v", got, ids[2:4])
	}
	if got := list(compute.ListInstancesInput{Offset: 10}); len(got) != 0 {
		t.Fatalf("past the end = %v", got)
	}
	if got := list(compute.ListInstancesInput{Tags: map[string]any{"k8s-cluster": "c1", "role": "worker"}}); !slices.Equal(got, []string{ids[0], ids[2], ids[4]}) {
		t.Fatalf("tag filter = %v", got)
	}
	if got := list(compute.ListInstancesInput{State: StateStopped}); !slices.Equal(got, ids[4:]) {
		t.Fatalf("state filter = %v", got)
	}
	if got := list(compute.ListInstancesInput{Name: "machine-2"}); !slices.Equal(got, ids[1:2]) {
		t.Fatalf("name filter = %v", got)
	}
	n, err := c.compute.Instances().Count(ctx(), &compute.ListInstancesInput{Tags: map[string]any{"k8s-cluster": "c1"}})
	if err != nil || n != 3 {
		t.Fatalf("Count = %d, %v; want 3", n, err)
	}
}

func TestSeededDeletedMachineIsGone(t *testing.T) {
	s, c := setup(t, Options{GoneReads: 1})
	seeded := s.AddMachine(Machine{State: StateDeleted})
	set := s.AddMachine(Machine{})
	s.SetMachineState(set.ID, StateDeleted)
	for _, id := range []string{seeded.ID, set.ID} {
		_, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: id})
		wantAPIError(t, err, http.StatusGone, "")
		_, err = c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: id})
		wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
	}
}
