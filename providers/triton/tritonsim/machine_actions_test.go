package tritonsim

import (
	"net/http"
	"testing"

	"github.com/joyent/triton-go/compute"
)

func imageID(t *testing.T, c clients, name string) string {
	t.Helper()
	imgs, err := c.compute.Images().List(ctx(), &compute.ListImagesInput{Name: name})
	if err != nil || len(imgs) != 1 {
		t.Fatalf("images %q: %v, %v", name, imgs, err)
	}
	return imgs[0].ID
}

func TestCreateMachineSettlesOnReads(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	fabric := s.State().Networks[1].ID
	m, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{
		Name: "lb-web", Package: "g4-highcpu-2G", Image: imageID(t, c, LoadBalancerImage),
		Networks: []string{fabric}, FirewallEnabled: true,
		Tags:     map[string]string{"k8s-cluster": "c1"},
		CNS:      compute.InstanceCNS{Services: []string{"web"}},
		Metadata: map[string]string{MetadataLoadBalancer: "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.State != StateProvisioning || m.Package != "g4-highcpu-2G" || !m.FirewallEnabled || m.Memory != 2048 {
		t.Fatalf("created %+v", m)
	}
	held, _ := s.Machine(m.ID)
	if held.Tags["k8s-cluster"] != "c1" || held.Tags[TagCNSServices] != "web" || held.Metadata[MetadataLoadBalancer] != "true" {
		t.Fatalf("tags %v metadata %v", held.Tags, held.Metadata)
	}
	if len(held.NICs) != 1 || held.NICs[0].Network != fabric {
		t.Fatalf("nics %+v", held.NICs)
	}
	states := []string{}
	for range 2 {
		got, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, got.State)
	}
	if states[0] != StateProvisioning || states[1] != StateRunning {
		t.Fatalf("states over two reads = %v", states)
	}
}

func TestCreateMachineRefused(t *testing.T) {
	s, c := setup(t, Options{})
	img := imageID(t, c, "base-64-lts")
	s.AddMachine(Machine{Name: "taken"})
	fabric := s.State().Networks[1].ID
	for name, tc := range map[string]struct {
		in           compute.CreateInstanceInput
		status       int
		code         string
		wantMachines int
	}{
		"unknown image":   {compute.CreateInstanceInput{Package: DefaultPackage, Image: "5b0e2ed6-1c2f-4b8e-8c4c-1f6f0c0c0c0c"}, http.StatusNotFound, "ResourceNotFound", 1},
		"unknown package": {compute.CreateInstanceInput{Package: "g9-huge", Image: img}, http.StatusConflict, "InvalidArgument", 1},
		"no package":      {compute.CreateInstanceInput{Image: img}, http.StatusConflict, "MissingParameter", 1},
		"unknown network": {compute.CreateInstanceInput{Package: DefaultPackage, Image: img, Networks: []string{"nope"}}, http.StatusConflict, "InvalidArgument", 1},
		"foreign IP":      {compute.CreateInstanceInput{Package: DefaultPackage, Image: img, NetworkObjects: []compute.NetworkObject{{IPv4UUID: fabric, IPv4IPs: []string{"192.0.2.7"}}}}, http.StatusConflict, "InvalidArgument", 1},
		"name in use":     {compute.CreateInstanceInput{Name: "taken", Package: DefaultPackage, Image: img}, http.StatusConflict, "InvalidArgument", 1},
		"triton tag":      {compute.CreateInstanceInput{Package: DefaultPackage, Image: img, Tags: map[string]string{"triton.foo": "x"}}, http.StatusConflict, "ValidationFailed", 1},
	} {
		_, err := c.compute.Instances().Create(ctx(), &tc.in)
		t.Run(name, func(t *testing.T) { wantAPIError(t, err, tc.status, tc.code) })
		if n := len(s.Machines()); n != tc.wantMachines {
			t.Fatalf("%s: %d machines held, want %d", name, n, tc.wantMachines)
		}
	}
}

func TestStopStartDelete(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	m := s.AddMachine(Machine{Name: "worker-1"})
	inst := c.compute.Instances()
	if err := inst.Stop(ctx(), &compute.StopInstanceInput{InstanceID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Machine(m.ID); got.State != StateStopping {
		t.Fatalf("after stop: %s", got.State)
	}
	s.Advance()
	if got, _ := s.Machine(m.ID); got.State != StateStopped {
		t.Fatalf("after Advance: %s", got.State)
	}
	if err := inst.Start(ctx(), &compute.StartInstanceInput{InstanceID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, err := inst.Get(ctx(), &compute.GetInstanceInput{ID: m.ID}); err != nil || got.State != StateRunning {
		t.Fatalf("after start and a read: %+v, %v", got, err)
	}
	if err := inst.EnableFirewall(ctx(), &compute.EnableFirewallInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Machine(m.ID); !got.FirewallEnabled {
		t.Fatal("enable_firewall did not enable it")
	}
	if err := inst.EnableDeletionProtection(ctx(), &compute.EnableDeletionProtectionInput{InstanceID: m.ID}); err != nil {
		t.Fatal(err)
	}
	wantAPIError(t, inst.Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}), http.StatusConflict, "CannotDestroyMachine")
	if err := inst.DisableDeletionProtection(ctx(), &compute.DisableDeletionProtectionInput{InstanceID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if err := inst.Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Machine(m.ID); got.State != StateDeleted {
		t.Fatalf("after delete: %s", got.State)
	}
	// Deleting again is 410 (triton-go's Delete returns it as an error:
	// ExecuteRequestRaw hands it no response to look at).
	wantAPIError(t, inst.Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}), http.StatusGone, "")
}

func TestFaultsUseTritonErrors(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{})
	remove := s.RateLimit(0, "GET /{account}/machines/{id}")
	_, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	wantAPIError(t, err, http.StatusTooManyRequests, "RequestThrottled")
	remove()
	s.Inject(Fault{Op: "GET /{account}/machines", Status: http.StatusServiceUnavailable, Count: 1})
	_, err = c.compute.Instances().List(ctx(), &compute.ListInstancesInput{})
	wantAPIError(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if _, err := c.compute.Instances().List(ctx(), &compute.ListInstancesInput{}); err != nil {
		t.Fatalf("after the one fault: %v", err)
	}
	if s.Stats()["GET /{account}/machines"] != 2 {
		t.Fatalf("stats %v", s.Stats())
	}
}
