package frameworktest

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
)

func testProviderIDRoundTrip(t *testing.T, s *suite) {
	inst := s.instances(t)
	id := s.target.Cloud.AddInstance("roundtrip-0")
	codec := framework.Codec(s.target.Provider)

	parsed, err := codec.Parse(codec.Format(id))
	if err != nil || parsed.Value != id {
		t.Fatalf("Parse(Format(%q)) = %+v, %v; want the same ID back", id, parsed, err)
	}
	// A Node without a providerID is found by name and gets the providerID
	// that a Node with it would be found by.
	byName, err := inst.InstanceMetadata(s.ctx, s.node("roundtrip-0", ""))
	if err != nil {
		t.Fatalf("InstanceMetadata by node name: %v", err)
	}
	if want := codec.Format(id); byName.ProviderID != want {
		t.Fatalf("InstanceMetadata by name: providerID %q, want %q", byName.ProviderID, want)
	}
	byID, err := inst.InstanceMetadata(s.ctx, s.node("roundtrip-0", id))
	if err != nil {
		t.Fatalf("InstanceMetadata by providerID: %v", err)
	}
	if byID.ProviderID != byName.ProviderID {
		t.Fatalf("providerID by ID %q differs from by name %q", byID.ProviderID, byName.ProviderID)
	}
}

func testInstanceMetadata(t *testing.T, s *suite) {
	inst := s.instances(t)
	id := s.target.Cloud.AddInstance("meta-0")
	md, err := inst.InstanceMetadata(s.ctx, s.node("meta-0", id))
	if err != nil {
		t.Fatalf("InstanceMetadata: %v", err)
	}
	if md.InstanceType == "" {
		t.Error("InstanceMetadata: empty InstanceType")
	}
	if md.Zone == "" && !s.target.NoZone {
		t.Error("InstanceMetadata: empty Zone")
	}
	if md.Region == "" && !s.target.NoRegion {
		t.Error("InstanceMetadata: empty Region")
	}
	var ips, hostnames int
	seen := map[corev1.NodeAddress]bool{}
	for _, a := range md.NodeAddresses {
		if seen[a] {
			t.Errorf("InstanceMetadata: duplicate address %v", a)
		}
		seen[a] = true
		switch a.Type {
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			ips++
		case corev1.NodeHostName:
			hostnames++
		}
	}
	if ips == 0 {
		t.Errorf("InstanceMetadata: no InternalIP or ExternalIP in %v", md.NodeAddresses)
	}
	if hostnames > 1 {
		t.Errorf("InstanceMetadata: %d Hostname addresses, want at most one", hostnames)
	}
}

func testInstanceExists(t *testing.T, s *suite) {
	inst := s.instances(t)
	id := s.target.Cloud.AddInstance("exists-0")
	node := s.node("exists-0", id)

	if ok, err := inst.InstanceExists(s.ctx, node); err != nil || !ok {
		t.Fatalf("InstanceExists(running instance) = %v, %v; want true, nil", ok, err)
	}
	faults := map[string]Fault{
		"500": FaultServerError, "401": FaultUnauthorized, "timeout": FaultTimeout,
		"a proxy's HTML 404": FaultProxyNotFound, "a 404 from a wrong base URL": FaultWrongBaseURL,
		"a 200 with a truncated body": FaultTruncatedBody,
	}
	for name, f := range faults {
		restore := s.target.Cloud.Fail(f)
		ok, err := inst.InstanceExists(s.ctx, node)
		restore()
		if err == nil {
			t.Errorf("InstanceExists during %s = %v, nil; want an error (only an authoritative not-found may say false)", name, ok)
		}
		// The same holds for a Node that is looked up by name.
		restore = s.target.Cloud.Fail(f)
		ok, err = inst.InstanceExists(s.ctx, s.node("exists-0", ""))
		restore()
		if err == nil {
			t.Errorf("InstanceExists by name during %s = %v, nil; want an error", name, ok)
		}
	}
	s.target.Cloud.DeleteInstance(id)
	if ok, err := inst.InstanceExists(s.ctx, node); err != nil || ok {
		t.Fatalf("InstanceExists(deleted instance) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := inst.InstanceExists(s.ctx, s.node("exists-0", "")); err != nil || ok {
		t.Fatalf("InstanceExists(deleted instance, by name) = %v, %v; want false, nil", ok, err)
	}
}

func testInstanceShutdown(t *testing.T, s *suite) {
	inst := s.instances(t)
	id := s.target.Cloud.AddInstance("shutdown-0")
	node := s.node("shutdown-0", id)
	if off, err := inst.InstanceShutdown(s.ctx, node); err != nil || off {
		t.Fatalf("InstanceShutdown(running) = %v, %v; want false, nil", off, err)
	}
	s.target.Cloud.ShutdownInstance(id)
	if off, err := inst.InstanceShutdown(s.ctx, node); err != nil || !off {
		t.Fatalf("InstanceShutdown(powered off) = %v, %v; want true, nil", off, err)
	}
	if ok, err := inst.InstanceExists(s.ctx, node); err != nil || !ok {
		t.Fatalf("InstanceExists(powered off) = %v, %v; want true, nil: a stopped VM still exists", ok, err)
	}
}

func testListInstances(t *testing.T, s *suite) {
	ip, ok := s.target.Provider.(framework.InstancesProvider)
	if !ok {
		t.Skip("provider has no instances")
	}
	want := map[string]bool{}
	for _, n := range []string{"list-0", "list-1", "list-2"} {
		want[s.target.Cloud.AddInstance(n)] = true
	}
	list, err := ip.Instances().ListInstances(s.ctx)
	if errors.Is(err, framework.ErrNotImplemented) {
		t.Skip("provider cannot list instances")
	}
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	got := map[string]bool{}
	for _, i := range list {
		got[i.ID] = true
	}
	for id := range want {
		if !got[id] {
			t.Errorf("ListInstances: missing instance %s", id)
		}
	}
}

// testSharedName: a Node named like two instances gets no providerID and is
// never reported gone: naming one of them would tie the Node to an
// unrelated VM, and delete it with that VM.
func testSharedName(t *testing.T, s *suite) {
	inst := s.instances(t)
	first := s.target.Cloud.AddInstance("twin")
	second := s.target.Cloud.AddInstance("twin")
	twin := s.node("twin", "")

	if md, err := inst.InstanceMetadata(s.ctx, twin); err == nil {
		t.Errorf("InstanceMetadata for a Node named like instances %s and %s = providerID %q; want an error, never a guess", first, second, md.ProviderID)
	}
	if ok, err := inst.InstanceExists(s.ctx, twin); err == nil {
		t.Errorf("InstanceExists for a Node named like two instances = %v, nil; want an error", ok)
	}
	if off, err := inst.InstanceShutdown(s.ctx, twin); err == nil {
		t.Errorf("InstanceShutdown for a Node named like two instances = %v, nil; want an error", off)
	}
	// A Node with a providerID is still found: the name is not used.
	for _, id := range []string{first, second} {
		md, err := inst.InstanceMetadata(s.ctx, s.node("twin", id))
		if err != nil || md.ProviderID != s.providerID(id) {
			t.Errorf("InstanceMetadata(providerID %s) = %+v, %v; want that instance", s.providerID(id), md, err)
		}
	}
}
