package csidriver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// controllerEnv is a driver serving the controller and node services (no
// node call mounts anything) against a tritonsim, logging at -v=10; the
// account key must be in no log line and no error it recorded.
type controllerEnv struct {
	t     *testing.T
	cloud *simCloud
	p     *csidriver.Driver
	d     *csitest.LoggedDriver
}

func startController(t *testing.T, opts tritonsim.Options) *controllerEnv {
	t.Helper()
	e := &controllerEnv{t: t, cloud: newSimCloud(t, opts)}
	e.p = e.cloud.provider(nil)
	e.d = csitest.StartLogged(t, e.p, e.cloud.secret)
	return e
}

// multiNode is the capability of a ReadWriteMany claim.
func multiNode() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
}

// create calls CreateVolume once.
func (e *controllerEnv) create(name string, r *csipb.CapacityRange, params map[string]string) (*csipb.Volume, error) {
	resp, err := e.d.Controller.CreateVolume(e.t.Context(), &csipb.CreateVolumeRequest{Name: name, CapacityRange: r, Parameters: params,
		VolumeCapabilities: []*csipb.VolumeCapability{multiNode()}})
	e.d.Code(err)
	return resp.GetVolume(), err
}

// createVolume calls CreateVolume until it is not Aborted, as the
// provisioner does, and returns the volume.
func (e *controllerEnv) createVolume(name string, r *csipb.CapacityRange) *csipb.Volume {
	e.t.Helper()
	var vol *csipb.Volume
	if _, err := e.d.UntilDone(func() (err error) { vol, err = e.create(name, r, nil); return err }); err != nil {
		e.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return vol
}

func (e *controllerEnv) deleteVolume(id string) error {
	_, err := e.d.Controller.DeleteVolume(e.t.Context(), &csipb.DeleteVolumeRequest{VolumeId: id})
	e.d.Code(err)
	return err
}

func (e *controllerEnv) requests() int { return len(e.cloud.sim.Requests()) }

// TestCSIBadInput: every invalid StorageClass parameter and size is
// answered with the spec's code and a message naming it, before any API
// call; the sizes are the datacenter's, 10 GiB to 1000 GiB, a size
// between two of them rounded up to the next.
func TestCSIBadInput(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	e.d.CheckBadCreates(t, e.requests, []csitest.BadCreate{
		{Name: "misspelt fstype", Parameters: map[string]string{"fstpye": "nfs"}, Want: codes.InvalidArgument, Naming: []string{"fstpye", "unknown parameter"}},
		{Name: "network", Parameters: map[string]string{"network": "My-Fabric-Network"}, Want: codes.InvalidArgument, Naming: []string{"network", "unknown parameter"}},
		{Name: "fstype", Parameters: map[string]string{"fstype": "ext4"}, Want: codes.InvalidArgument, Naming: []string{"fstype", "ext4"}},
		{Name: "fstype in another case", Parameters: map[string]string{"FsType": "nfs4"}, Want: codes.InvalidArgument, Naming: []string{"FsType", "nfs4"}},
		{Name: "csi fstype", Parameters: map[string]string{"csi.storage.k8s.io/fstype": "xfs"}, Want: codes.InvalidArgument,
			Naming: []string{"csi.storage.k8s.io/fstype", "xfs"}},
		{Name: "larger than 1000 GiB", CapacityRange: &csipb.CapacityRange{RequiredBytes: 1000*gib + 1}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
		{Name: "limit below 10 GiB", CapacityRange: &csipb.CapacityRange{LimitBytes: 9 * gib}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
		{Name: "negative", CapacityRange: &csipb.CapacityRange{RequiredBytes: -1}, Want: codes.InvalidArgument, Naming: []string{"capacity_range"}},
	})

	// What external-provisioner passes on is taken; no size asked for is
	// the datacenter's smallest, ready at once here, with its NFS export
	// in the volume_context and its network as topology.
	vol, err := e.create("pvc-good", nil, map[string]string{"fstype": "nfs", "csi.storage.k8s.io/fstype": "nfs",
		"csi.storage.k8s.io/pvc/name": "data", "csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-good"})
	if err != nil {
		t.Fatalf("CreateVolume with the parameters external-provisioner passes: %v", err)
	}
	v := e.cloud.volume(t, vol.GetVolumeId())
	wantTopology := []*csipb.Topology{{Segments: map[string]string{csidriver.TopologyKey: e.cloud.fabric()}}}
	if vol.GetCapacityBytes() != 10*gib || v.Size != 10240 || v.Name != "pvc-good" || v.Type != "tritonnfs" ||
		!slices.Equal(v.Networks, []string{e.cloud.fabric()}) || v.State != tritonsim.VolumeReady ||
		!maps.Equal(vol.GetVolumeContext(), map[string]string{"filesystem_path": v.FilesystemPath}) ||
		len(vol.GetAccessibleTopology()) != 1 || !maps.Equal(vol.GetAccessibleTopology()[0].GetSegments(), wantTopology[0].GetSegments()) {
		t.Errorf("volume %v, %+v: want 10 GiB (10240 MiB), named, tritonnfs, on the default fabric, ready, its filesystem_path in the context, its network as topology",
			vol, v)
	}
	// Sizes round up to the next the datacenter has.
	for _, tc := range []struct {
		required int64
		want     int64 // MiB
	}{{10*gib + 1, 20 * 1024}, {100 * gib, 100 * 1024}, {100*gib + 1, 200 * 1024}, {110 * gib, 200 * 1024}, {901 * gib, 1000 * 1024}} {
		name := fmt.Sprintf("pvc-%d", tc.required)
		vol, err := e.create(name, &csipb.CapacityRange{RequiredBytes: tc.required}, nil)
		if err != nil || vol.GetCapacityBytes() != tc.want*mib || e.cloud.volume(t, vol.GetVolumeId()).Size != tc.want {
			t.Errorf("CreateVolume of %d bytes: %v, %v; want %d MiB", tc.required, vol, err, tc.want)
		}
	}
	// A range between two sizes is refused, creating nothing.
	before := len(e.cloud.sim.Volumes())
	_, err = e.create("pvc-between", &csipb.CapacityRange{RequiredBytes: 110 * gib, LimitBytes: 150 * gib}, nil)
	e.d.CheckRefused(t, err, codes.OutOfRange, "capacity_range", "102400, 204800")
	if n := len(e.cloud.sim.Volumes()) - before; n != 0 {
		t.Errorf("%d volumes created for a range between two sizes", n)
	}
	// A volume ID from elsewhere: NotFound, or deleted, without an API
	// request.
	requests := e.requests()
	if _, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: "../../machines"}); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerGetVolume of a volume ID with a path: %v, want NotFound", err)
	}
	if err := e.deleteVolume("not-a-volume"); err != nil {
		t.Errorf("DeleteVolume of an ID no volume has: %v", err)
	}
	if n := e.requests() - requests; n != 0 {
		t.Errorf("%d API requests for IDs that name nothing", n)
	}
	// Topology that is no network.
	_, err = e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-topology", VolumeCapabilities: []*csipb.VolumeCapability{multiNode()},
		AccessibilityRequirements: &csipb.TopologyRequirement{Preferred: []*csipb.Topology{{Segments: map[string]string{csidriver.TopologyKey: "net-1"}}}}})
	e.d.CheckRefused(t, err, codes.InvalidArgument, csidriver.TopologyKey, "net-1")
}

// TestCSITopology: a volume is created on the network its topology
// chooses, and is accessible there; a network that is no fabric is
// CloudAPI's InvalidArgument; a node reports its first fabric NIC's
// network, none without one.
func TestCSITopology(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	other := e.cloud.sim.AddNetwork(tritonsim.Network{Name: "storage", Fabric: true, VLAN: 3})
	seg := func(n string) *csipb.Topology {
		return &csipb.Topology{Segments: map[string]string{csidriver.TopologyKey: n}}
	}
	resp, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-other", VolumeCapabilities: []*csipb.VolumeCapability{multiNode()},
		AccessibilityRequirements: &csipb.TopologyRequirement{Requisite: []*csipb.Topology{seg(e.cloud.fabric()), seg(other.ID)}, Preferred: []*csipb.Topology{seg(other.ID)}}})
	if err != nil {
		t.Fatalf("CreateVolume on network %s: %v", other.ID, err)
	}
	if v := e.cloud.volume(t, resp.GetVolume().GetVolumeId()); !slices.Equal(v.Networks, []string{other.ID}) ||
		resp.GetVolume().GetAccessibleTopology()[0].GetSegments()[csidriver.TopologyKey] != other.ID {
		t.Errorf("volume on %v, accessible from %v; want network %s", v.Networks, resp.GetVolume().GetAccessibleTopology(), other.ID)
	}
	public := e.cloud.machine.NICs[0].Network
	_, err = e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-public", VolumeCapabilities: []*csipb.VolumeCapability{multiNode()},
		AccessibilityRequirements: &csipb.TopologyRequirement{Requisite: []*csipb.Topology{seg(public)}}})
	e.d.CheckRefused(t, err, codes.InvalidArgument, "Invalid networks", public)

	info, err := e.d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != e.cloud.machine.ID || info.GetMaxVolumesPerNode() != 0 ||
		!maps.Equal(info.GetAccessibleTopology().GetSegments(), map[string]string{csidriver.TopologyKey: e.cloud.fabric()}) {
		t.Errorf("NodeGetInfo: %v, %v; want instance %s on network %s, no volume limit", info, err, e.cloud.machine.ID, e.cloud.fabric())
	}
	// Two fabric NICs: the first's network; a public NIC only: none.
	for _, tc := range []struct {
		nics []string
		want map[string]string
	}{
		{[]string{public, other.ID, e.cloud.fabric()}, map[string]string{csidriver.TopologyKey: other.ID}},
		{[]string{public}, nil},
	} {
		var nics []tritonsim.NIC
		for _, n := range tc.nics {
			nics = append(nics, tritonsim.NIC{Network: n})
		}
		m := e.cloud.sim.AddMachine(tritonsim.Machine{NICs: nics})
		p := e.cloud.provider(map[string]string{"TRITON_MDATA_GET": writeMdataGet(t, m.ID, sdcNICs(e.cloud.sim, m))})
		d := csitest.StartDriver(t, csi.Options{Provider: p, Mode: csi.ModeNode}, 0)
		info, err := d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
		if err != nil || info.GetNodeId() != m.ID || !maps.Equal(info.GetAccessibleTopology().GetSegments(), tc.want) {
			t.Errorf("NodeGetInfo of an instance on %v: %v, %v; want topology %v", tc.nics, info, err, tc.want)
		}
	}
}

// TestCSICreating: with tritonsim's volumes settling on their third read,
// CreateVolume sends one create and answers Aborted until the volume is
// ready (the node needs its filesystem_path, which a creating volume has
// not), each retry one list by name; the answer then carries it.
func TestCSICreating(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: 3})
	before := e.cloud.sim.Stats()
	vol, err := e.create("pvc-a", nil, nil)
	if e.d.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "being created") {
		t.Fatalf("CreateVolume of a volume being created: %v, %v; want Aborted", vol, err)
	}
	var aborted int
	if aborted, err = e.d.UntilDone(func() (err error) { vol, err = e.create("pvc-a", nil, nil); return err }); err != nil {
		t.Fatalf("CreateVolume retried: %v", err)
	}
	v := e.cloud.volume(t, vol.GetVolumeId())
	if aborted == 0 || v.State != tritonsim.VolumeReady || vol.GetVolumeContext()["filesystem_path"] != v.FilesystemPath || v.FilesystemPath == "" {
		t.Errorf("after %d retries answered Aborted: %v, %+v; want the ready volume and its filesystem_path", aborted, vol, v)
	}
	stats := csitest.DiffStats(before, e.cloud.sim.Stats())
	if stats["POST /{account}/volumes"] != 1 || len(e.cloud.sim.Volumes()) != 1 || stats["GET /{account}/volumes"] > 2+aborted+1 {
		t.Errorf("requests %v, volumes %v: want one create, one list per call (two the first time)", stats, e.cloud.sim.Volumes())
	}
	// A volume being created is found, without its export.
	got, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: vol.GetVolumeId()})
	if err != nil || got.GetVolume().GetCapacityBytes() != 10*gib {
		t.Errorf("ControllerGetVolume: %v, %v", got, err)
	}
	// Deleting never waits: the volume is deleting, then gone; a delete
	// meanwhile, or after, succeeds.
	for range 2 {
		before := e.cloud.sim.Stats()
		if err := e.deleteVolume(vol.GetVolumeId()); err != nil {
			t.Fatalf("DeleteVolume: %v", err)
		}
		if got := csitest.DiffStats(before, e.cloud.sim.Stats()); !maps.Equal(got, map[string]int{"DELETE /{account}/volumes/{id}": 1}) {
			t.Errorf("DeleteVolume requests: %v; want one DELETE", got)
		}
	}
	if v, ok := e.cloud.sim.Volume(vol.GetVolumeId()); !ok || v.State != tritonsim.VolumeDeleting {
		t.Errorf("volume after DeleteVolume: %+v, %v; want deleting", v, ok)
	}
	if _, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: vol.GetVolumeId()}); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerGetVolume of a volume being deleted: %v, want NotFound", err)
	}
	e.cloud.sim.Advance()
	if _, ok := e.cloud.sim.Volume(vol.GetVolumeId()); ok {
		t.Fatal("the volume is not gone")
	}
	if err := e.deleteVolume(vol.GetVolumeId()); err != nil {
		t.Errorf("DeleteVolume of a volume gone: %v", err)
	}
	// Its name is free again: another volume.
	if again := e.createVolume("pvc-a", nil); again.GetVolumeId() == vol.GetVolumeId() {
		t.Errorf("CreateVolume pvc-a after its deletion: the deleted volume %s", vol.GetVolumeId())
	}
}

// TestCSIFailedVolume: a volume that fails to be created (its storage
// zone did not provision) is an error, not Aborted; it is deleted, and
// the next CreateVolume of the name makes another, whether the failure
// shows at create or while the retries wait for it.
func TestCSIFailedVolume(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads int
	}{{"at once", -1}, {"while creating", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startController(t, tritonsim.Options{ProvisioningReads: tc.reads})
			e.cloud.sim.FailNextVolumes(1)
			_, err := e.d.UntilDone(func() error { _, err := e.create("pvc-f", nil, nil); return err })
			if e.d.Code(err) != codes.Internal || !strings.Contains(err.Error(), "failed to be created") {
				t.Fatalf("CreateVolume of a volume that fails: %v; want Internal, saying it failed", err)
			}
			failed := e.cloud.sim.Volumes()
			if len(failed) > 1 || len(failed) == 1 && failed[0].State != tritonsim.VolumeDeleting {
				t.Errorf("volumes: %+v; want the failed one deleting, or gone", failed)
			}
			vol := e.createVolume("pvc-f", nil)
			if v := e.cloud.volume(t, vol.GetVolumeId()); len(failed) == 1 && v.ID == failed[0].ID || v.State != tritonsim.VolumeReady {
				t.Errorf("CreateVolume after the failure: %+v; want another volume, ready", v)
			}
		})
	}
}

// TestCSIInUse: a volume a machine uses (CloudAPI's refs) is not deleted:
// FailedPrecondition, naming the machine; once it no longer uses it, the
// volume is deleted.
func TestCSIInUse(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	vol := e.createVolume("pvc-used", nil)
	if !e.cloud.sim.AddVolumeRef(vol.GetVolumeId(), e.cloud.machine.ID) {
		t.Fatal("AddVolumeRef")
	}
	err := e.deleteVolume(vol.GetVolumeId())
	e.d.CheckRefused(t, err, codes.FailedPrecondition, "volume in use", e.cloud.machine.ID)
	if v := e.cloud.volume(t, vol.GetVolumeId()); v.State != tritonsim.VolumeReady {
		t.Errorf("volume in use: %s", v.State)
	}
	e.cloud.sim.RemoveVolumeRef(vol.GetVolumeId(), e.cloud.machine.ID)
	if err := e.deleteVolume(vol.GetVolumeId()); err != nil {
		t.Errorf("DeleteVolume once unused: %v", err)
	}
	if _, ok := e.cloud.sim.Volume(vol.GetVolumeId()); ok {
		t.Error("the volume is not gone")
	}
}

// TestCSINotFound: only CloudAPI's own 404 VolumeNotFound says a volume is
// gone; a 404 ResourceNotFound (a CloudAPI without volumes, or a wrong
// URL), a proxy's HTML 404 or a 410 do not, and DeleteVolume then fails,
// leaving the volume, which the retry deletes.
func TestCSINotFound(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	if err := e.deleteVolume(randomUUID()); err != nil {
		t.Errorf("DeleteVolume of a volume that never was: %v", err)
	}
	vol := e.createVolume("pvc-kept", nil)
	for _, f := range []tritonsim.Fault{
		{Status: http.StatusNotFound},
		{Status: http.StatusNotFound, Body: "<html><body>Not Found</body></html>", ContentType: "text/html"},
		{Status: http.StatusGone, Code: "VolumeNotFound"},
		{Status: http.StatusBadRequest, Code: "VolumeNotFound"},
	} {
		f.Op, f.Count = "DELETE /{account}/volumes/{id}", 1
		e.cloud.sim.Inject(f)
		if err := e.deleteVolume(vol.GetVolumeId()); e.d.Code(err) == codes.OK || e.d.Code(err) == codes.NotFound {
			t.Errorf("DeleteVolume answered %d %s %v: %v; want an error", f.Status, f.Code, f.Body, err)
		}
		f.Op = "GET /{account}/volumes/{id}"
		e.cloud.sim.Inject(f)
		if _, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: vol.GetVolumeId()}); e.d.Code(err) == codes.NotFound {
			t.Errorf("ControllerGetVolume answered %d %s %v: NotFound", f.Status, f.Code, f.Body)
		}
	}
	if v := e.cloud.volume(t, vol.GetVolumeId()); v.State != tritonsim.VolumeReady {
		t.Errorf("volume after the refused deletes: %s", v.State)
	}
	if err := e.deleteVolume(vol.GetVolumeId()); err != nil {
		t.Errorf("DeleteVolume retried: %v", err)
	}
}

// TestCSIMalformedAnswers: an answer triton-go cannot decode, or one
// about another volume or without what the driver needs, is an error; the
// driver does not panic, and the next call works.
func TestCSIMalformedAnswers(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	a := e.createVolume("pvc-a", nil)
	for _, tc := range []struct {
		name string
		f    tritonsim.Fault
		call func() error
	}{
		{"truncated list", tritonsim.Fault{Op: "GET /{account}/volumes", Truncate: true}, func() error { _, err := e.create("pvc-b", nil, nil); return err }},
		{"list of a volume without an ID", tritonsim.Fault{Op: "GET /{account}/volumes", Mutate: replace(`"id":"`, `"id":"x`)},
			func() error {
				_, err := e.d.Controller.ListVolumes(t.Context(), &csipb.ListVolumesRequest{})
				return err
			}},
		{"list of null", tritonsim.Fault{Op: "GET /{account}/volumes", Mutate: func(int, []byte) []byte { return []byte("[null]") }},
			func() error { _, err := e.create("pvc-b", nil, nil); return err }},
		{"create answering null", tritonsim.Fault{Op: "POST /{account}/volumes", Mutate: func(int, []byte) []byte { return []byte("null") }},
			func() error { _, err := e.create("pvc-c", nil, nil); return err }},
		{"create answering a size of the wrong type", tritonsim.Fault{Op: "POST /{account}/volumes", Mutate: replace(`"size":`, `"size":"`)},
			func() error { _, err := e.create("pvc-d", nil, nil); return err }},
		{"ready without filesystem_path", tritonsim.Fault{Op: "GET /{account}/volumes", Mutate: replace(`"filesystem_path"`, `"other_path"`)},
			func() error { _, err := e.create("pvc-a", nil, nil); return err }},
		{"get of another volume", tritonsim.Fault{Op: "GET /{account}/volumes/{id}", Mutate: replace(a.GetVolumeId(), randomUUID())},
			func() error {
				_, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: a.GetVolumeId()})
				return err
			}},
		{"get of null", tritonsim.Fault{Op: "GET /{account}/volumes/{id}", Mutate: func(int, []byte) []byte { return []byte("null") }},
			func() error {
				_, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: a.GetVolumeId()})
				return err
			}},
	} {
		tc.f.Count = 1
		e.cloud.sim.Inject(tc.f)
		if err := tc.call(); e.d.Code(err) != codes.Internal {
			t.Errorf("%s: %v; want Internal", tc.name, err)
		}
	}
	if _, err := e.create("pvc-a", nil, nil); err != nil {
		t.Errorf("CreateVolume of pvc-a, existing: %v", err)
	}
	if err := e.deleteVolume(a.GetVolumeId()); err != nil {
		t.Errorf("DeleteVolume: %v", err)
	}
}

// replace is a mutation that replaces the first old in a body with new.
func replace(old, new string) func(int, []byte) []byte {
	return func(_ int, body []byte) []byte { return []byte(strings.Replace(string(body), old, new, 1)) }
}

// TestCSICredentials: the controller takes the CCM's credentials (the key,
// its file, or the SDC_* names); missing or wrong ones stop it with an
// error that names the setting, not the key; a datacenter without volumes
// stops it too. A node plugin needs none, but its instance metadata.
func TestCSICredentials(t *testing.T) {
	cloud := newSimCloud(t, tritonsim.Options{})
	serve := func(mode csi.Mode, env map[string]string, secrets ...string) error {
		t.Helper()
		return csitest.ServeUntilListening(t, cloud.provider(env), mode, append(secrets, cloud.secret)...)
	}
	if err := serve(csi.ModeController, nil); err != nil {
		t.Errorf("controller with the CCM's variables: %v", err)
	}
	file := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(file, cloud.sim.AccountKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve(csi.ModeController, map[string]string{"TRITON_KEY_MATERIAL": "", "TRITON_KEY_MATERIAL_FILE": file}); err != nil {
		t.Errorf("controller with TRITON_KEY_MATERIAL_FILE: %v", err)
	}
	sdc := map[string]string{}
	for _, k := range []string{"URL", "ACCOUNT", "KEY_ID", "KEY_MATERIAL"} {
		sdc["TRITON_"+k], sdc["SDC_"+k] = "", cloud.env["TRITON_"+k]
	}
	if err := serve(csi.ModeController, sdc); err != nil {
		t.Errorf("controller with the SDC_* variables: %v", err)
	}

	noKey := map[string]string{"TRITON_KEY_MATERIAL": ""}
	err := serve(csi.ModeController, noKey)
	if err == nil || !strings.Contains(err.Error(), "TRITON_KEY_MATERIAL: required by the controller") {
		t.Errorf("controller without the key: %v", err)
	}
	err = serve(csi.ModeController, map[string]string{"TRITON_URL": "", "TRITON_ACCOUNT": ""})
	for _, want := range []string{"TRITON_URL: required", "TRITON_ACCOUNT: required by the controller"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("controller without URL and account: %v; want %q", err, want)
		}
	}
	other := otherKeyPEM(t)
	err = serve(csi.ModeController, map[string]string{"TRITON_KEY_MATERIAL": other, "TRITON_KEY_ID": ""}, pemLine(other))
	if err == nil || !strings.Contains(err.Error(), "TRITON_KEY_ID") || !strings.Contains(err.Error(), "refused the key") {
		t.Errorf("controller with a key CloudAPI does not know: %v", err)
	}
	err = serve(csi.ModeController, map[string]string{"TRITON_KEY_ID": "SHA256:bm90IHRoaXMga2V5"})
	if err == nil || !strings.Contains(err.Error(), "TRITON_KEY_ID") {
		t.Errorf("controller with a TRITON_KEY_ID of another key: %v", err)
	}
	noVolumes := newSimCloud(t, tritonsim.Options{NoVolumes: true})
	err = csitest.ServeUntilListening(t, noVolumes.provider(nil), csi.ModeController, noVolumes.secret)
	if err == nil || !strings.Contains(err.Error(), "TRITON_URL") || !strings.Contains(err.Error(), "serves no volumes") {
		t.Errorf("controller in a datacenter without volumes: %v", err)
	}

	// A node plugin without credentials, in mode node or all.
	none := map[string]string{"TRITON_URL": "", "TRITON_ACCOUNT": "", "TRITON_KEY_ID": "", "TRITON_KEY_MATERIAL": ""}
	for _, mode := range []csi.Mode{csi.ModeNode, csi.ModeAll} {
		if err := serve(mode, none); err != nil {
			t.Errorf("%s without credentials: %v", mode, err)
		}
	}
	// A node plugin whose metadata cannot be read, or is not an
	// instance's: the error names the setting.
	for name, mdata := range map[string]string{
		"no such command":  filepath.Join(t.TempDir(), "mdata-get"),
		"no instance UUID": writeMdataGet(t, "i-am-no-uuid", sdcNICs(cloud.sim, cloud.machine)),
		"NICs not JSON":    writeMdataGet(t, cloud.machine.ID, "net0 10.0.0.5"),
		"NIC without its network": writeMdataGet(t, cloud.machine.ID,
			`[{"interface":"net0","nic_tag":"sdc_overlay/2","ip":"10.0.0.5","network_uuid":"../../x"}]`),
	} {
		err := serve(csi.ModeNode, map[string]string{"TRITON_MDATA_GET": mdata})
		if err == nil || !strings.Contains(err.Error(), "TRITON_MDATA_GET") {
			t.Errorf("node plugin, %s: %v; want TRITON_MDATA_GET named", name, err)
		}
	}
	// Bad settings, each named.
	err = serve(csi.ModeNode, map[string]string{"TRITON_URL": "ftp://x", "TRITON_MDATA_GET": " "})
	for _, want := range []string{"TRITON_URL", "TRITON_MDATA_GET"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad settings: %v, want %s named", err, want)
		}
	}
	// A process serving both without credentials answers controller
	// calls FailedPrecondition.
	d := csitest.StartDriver(t, csi.Options{Provider: cloud.provider(none)}, 0)
	_, err = d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-x", VolumeCapabilities: []*csipb.VolumeCapability{multiNode()}})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "TRITON_KEY_MATERIAL") {
		t.Errorf("CreateVolume without credentials: %v; want FailedPrecondition naming TRITON_KEY_MATERIAL", err)
	}
}

// otherKeyPEM is a key CloudAPI does not know (an ECDSA key, SEC1 PEM).
func otherKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// pemLine is a line of a PEM's body: what must be in no log or error.
func pemLine(p string) string {
	lines := strings.Split(strings.TrimSpace(p), "\n")
	return lines[1]
}

// TestCSINodeMount: the node mounts a volume's filesystem_path over NFS,
// with Triton's options; a volume_context without one, or with one that
// is no NFS export (or could be taken for an option), is InvalidArgument.
func TestCSINodeMount(t *testing.T) {
	p := csidriver.New()
	src, err := p.NodeMount(t.Context(), csi.MountRequest{VolumeID: randomUUID(), Target: "/t",
		Context: map[string]string{"filesystem_path": "10.200.0.7:/zones/0f1e2d3c-4b5a-4697-8877-665544332211/data"}})
	if err != nil || src.Source != "10.200.0.7:/zones/0f1e2d3c-4b5a-4697-8877-665544332211/data" || src.FSType != "nfs" ||
		!slices.Equal(src.Options, []string{"vers=3", "sec=sys"}) {
		t.Errorf("NodeMount: %+v, %v; want the filesystem_path over NFS, vers=3,sec=sys", src, err)
	}
	for _, path := range []string{"", "10.200.0.7", "10.200.0.7:data", "-o/etc:/x", "a:/b,c", "a:/b c", ":/data", "nfs.example.com:/x\n"} {
		ctx := map[string]string{"filesystem_path": path}
		if path == "" {
			ctx = nil
		}
		_, err := p.NodeMount(t.Context(), csi.MountRequest{VolumeID: "v", Target: "/t", Context: ctx})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "filesystem_path") {
			t.Errorf("NodeMount of %q: %v; want InvalidArgument naming filesystem_path", path, err)
		}
	}
	if err := p.NodeUnmount(t.Context(), "v", "/t"); err != nil {
		t.Errorf("NodeUnmount: %v", err)
	}
}

// TestCSIListVolumes: the account's volumes but for those being deleted
// and the failed ones.
func TestCSIListVolumes(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	a, b := e.createVolume("pvc-a", nil), e.createVolume("pvc-b", nil)
	if _, err := e.cloud.sim.AddVolume(tritonsim.Volume{Name: "broken", State: tritonsim.VolumeFailed}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cloud.sim.AddVolume(tritonsim.Volume{Name: "going", State: tritonsim.VolumeDeleting}); err != nil {
		t.Fatal(err)
	}
	list, err := e.d.Controller.ListVolumes(t.Context(), &csipb.ListVolumesRequest{})
	var ids []string
	for _, en := range list.GetEntries() {
		ids = append(ids, en.GetVolume().GetVolumeId())
	}
	if want := []string{a.GetVolumeId(), b.GetVolumeId()}; err != nil || !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(want))) {
		t.Errorf("ListVolumes: %v, %v; want %v", ids, err, want)
	}
}

// TestCSIDuplicateNames: two volumes of one name are an error, not a
// guess.
func TestCSIDuplicateNames(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1})
	// CloudAPI refuses a second live volume of a name; one added by hand
	// makes two.
	for range 2 {
		if _, err := e.cloud.sim.AddVolume(tritonsim.Volume{Name: "pvc-twice"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.create("pvc-twice", nil, nil)
	if e.d.Code(err) != codes.Internal || !strings.Contains(err.Error(), "several volumes") {
		t.Errorf("CreateVolume of a name two volumes have: %v", err)
	}
}

// TestCSIVolumeName: a CSI name CloudAPI takes is the volume's name;
// another is made into one, the same every time, different for different
// names.
func TestCSIVolumeName(t *testing.T) {
	const pvc = "pvc-6f1f8a4e-7b0c-4c5e-9d5e-1b7b9e0c2d3f"
	if got := csidriver.VolumeName(pvc); got != pvc {
		t.Errorf("VolumeName(%s) = %s", pvc, got)
	}
	seen := map[string]string{}
	for _, name := range []string{"Sanity Vol", "Sanity-Vol", "x", "-x", "_x", "ü", strings.Repeat("x", 256), strings.Repeat("x", 257),
		strings.Repeat("x", 300), strings.Repeat("x", 299) + "y"} {
		got := csidriver.VolumeName(name)
		if len(got) > 256 || got != csidriver.VolumeName(name) || !cloudAPIName(got) {
			t.Errorf("VolumeName(%q) = %q: too long, not stable, or not a name CloudAPI takes", name, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("VolumeName(%q) = VolumeName(%q)", name, prev)
		}
		seen[got] = name
	}
}

// cloudAPIName is CloudAPI's check of a volume's name: /^[a-z0-9][\w.-]+$/i.
func cloudAPIName(s string) bool {
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '.' && c != '-') {
			return false
		}
	}
	return len(s) >= 2
}

// TestCSIVolumeSizes: the sizes are the datacenter's, as ListVolumeSizes
// gives them at start-up; a create CloudAPI refuses for its size (the
// sizes changed since) is OutOfRange, saying so.
func TestCSIVolumeSizes(t *testing.T) {
	e := startController(t, tritonsim.Options{ProvisioningReads: -1, VolumeSizes: []int64{51200, 5120, 10240}})
	for _, tc := range []struct {
		r    *csipb.CapacityRange
		want int64 // MiB; 0: refused
	}{
		{nil, 5120},
		{&csipb.CapacityRange{RequiredBytes: 5*gib + 1}, 10240},
		{&csipb.CapacityRange{RequiredBytes: 11 * gib}, 51200},
		{&csipb.CapacityRange{RequiredBytes: 11 * gib, LimitBytes: 20 * gib}, 0},
		{&csipb.CapacityRange{RequiredBytes: 51 * gib}, 0},
	} {
		vol, err := e.create(fmt.Sprintf("pvc-%d-%d", tc.r.GetRequiredBytes(), tc.r.GetLimitBytes()), tc.r, nil)
		switch {
		case tc.want == 0 && status.Code(err) != codes.OutOfRange:
			t.Errorf("CreateVolume %v: %v, %v; want OutOfRange", tc.r, vol, err)
		case tc.want != 0 && (err != nil || vol.GetCapacityBytes() != tc.want*mib || e.cloud.volume(t, vol.GetVolumeId()).Size != tc.want):
			t.Errorf("CreateVolume %v: %v, %v; want %d MiB", tc.r, vol, err, tc.want)
		}
	}
	e.cloud.sim.Inject(tritonsim.Fault{Op: "POST /{account}/volumes", Status: http.StatusConflict, Code: "VolumeSizeNotAvailable",
		Message: "Error when creating volume: Volume size 5120 is not available. Available sizes are: 10240", Count: 1})
	_, err := e.create("pvc-stale", nil, nil)
	e.d.CheckRefused(t, err, codes.OutOfRange, "changed since", "Available sizes are: 10240")
}
