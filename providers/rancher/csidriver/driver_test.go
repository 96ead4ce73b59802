package csidriver_test

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher/csidriver"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

const mib = int64(1) << 20

// controllerEnv is a driver serving the controller and node services
// against a ranchersim, logging at -v=10; the secret key must be in no
// log line and no error it recorded.
type controllerEnv struct {
	t     *testing.T
	cloud *csiCloud
	d     *csitest.LoggedDriver
}

func startController(t *testing.T, opts ranchersim.Options) *controllerEnv {
	t.Helper()
	e := &controllerEnv{t: t, cloud: newCSICloud(t, opts, 1)}
	e.d = csitest.StartLogged(t, e.cloud.provider(0, nil), csiSecret)
	return e
}

// capability is a mount capability, multi-node (ReadWriteMany) or
// single-node (ReadWriteOnce).
func capability(multi bool) *csipb.VolumeCapability {
	mode := csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	if multi {
		mode = csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	}
	return &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}}}
}

// create is a CreateVolume of name with params, size bytes (0: none asked
// for) and a multi-node or single-node capability.
func (e *controllerEnv) create(name string, params map[string]string, size int64, multi bool) (*csipb.Volume, error) {
	req := &csipb.CreateVolumeRequest{Name: name, Parameters: params, VolumeCapabilities: []*csipb.VolumeCapability{capability(multi)}}
	if size > 0 {
		req.CapacityRange = &csipb.CapacityRange{RequiredBytes: size}
	}
	resp, err := e.d.Controller.CreateVolume(e.t.Context(), req)
	e.d.Code(err)
	return resp.GetVolume(), err
}

func (e *controllerEnv) mustCreate(name string, params map[string]string, size int64, multi bool) *csipb.Volume {
	e.t.Helper()
	v, err := e.create(name, params, size, multi)
	if err != nil {
		e.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return v
}

func (e *controllerEnv) deleteVolume(id string) error {
	_, err := e.d.Controller.DeleteVolume(e.t.Context(), &csipb.DeleteVolumeRequest{VolumeId: id})
	e.d.Code(err)
	return err
}

func (e *controllerEnv) getVolume(id string) (*csipb.ControllerGetVolumeResponse, error) {
	resp, err := e.d.Controller.ControllerGetVolume(e.t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: id})
	e.d.Code(err)
	return resp, err
}

// requests is how many API requests the simulator served.
func (e *controllerEnv) requests() int {
	n := 0
	for _, c := range e.cloud.sim.Stats() {
		n += c
	}
	return n
}

// TestCSIBadInput: every invalid StorageClass parameter is answered
// InvalidArgument with a message naming it, before any API call; a
// storage driver the environment does not have, and a multi-node volume
// of a single-host driver, before any write.
func TestCSIBadInput(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	e.d.CheckBadCreates(t, e.requests, []csitest.BadCreate{
		{Name: "misspelt fstype", Parameters: map[string]string{"fstpye": "xfs"}, Want: codes.InvalidArgument, Naming: []string{"fstpye", "unknown parameter"}},
		{Name: "fstype", Parameters: map[string]string{"fstype": "ext4"}, Want: codes.InvalidArgument, Naming: []string{"fstype", "storage driver's"}},
		{Name: "csi fstype", Parameters: map[string]string{"csi.storage.k8s.io/fstype": "xfs"}, Want: codes.InvalidArgument,
			Naming: []string{"csi.storage.k8s.io/fstype"}},
		{Name: "driver out of the directory", Parameters: map[string]string{"driver": "../docker"}, Want: codes.InvalidArgument,
			Naming: []string{"driver", "../docker"}},
		{Name: "empty driver", Parameters: map[string]string{"driver": ""}, Want: codes.InvalidArgument, Naming: []string{"driver", "empty"}},
		{Name: "long driver", Parameters: map[string]string{"driver": strings.Repeat("d", 49)}, Want: codes.InvalidArgument,
			Naming: []string{"driver", "48 bytes"}},
		{Name: "driver option without a name", Parameters: map[string]string{"driverOpts.": "x"}, Want: codes.InvalidArgument,
			Naming: []string{"driverOpts.", "no option name"}},
		{Name: "several", Parameters: map[string]string{"zone": "a", "fstype": "ext4", "csi.storage.k8s.io/pvc/name": "ok"},
			Want: codes.InvalidArgument, Naming: []string{"zone", "fstype"}},
		{Name: "negative", CapacityRange: &csipb.CapacityRange{RequiredBytes: -1}, Want: codes.InvalidArgument, Naming: []string{"capacity_range"}},
	})

	writes := e.cloud.sim.Writes()
	_, err := e.create("pvc-efs", map[string]string{"driver": "rancher-efs"}, 0, false)
	e.d.CheckRefused(t, err, codes.InvalidArgument, "driver", `"rancher-efs"`, "rancher-ebs, rancher-nfs")
	_, err = e.create("pvc-rwx", map[string]string{"driver": ranchersim.DriverRancherEBS}, 0, true)
	e.d.CheckRefused(t, err, codes.InvalidArgument, "rancher-ebs", "singleHostRW", "not supported")
	if w := e.cloud.sim.Writes() - writes; w != 0 {
		t.Errorf("%d writes for refused volumes", w)
	}
}

// TestCSICreate: a volume is a Cattle volume of the StorageClass's storage
// driver (rancher-nfs by default), named as the CSI name, with its
// driverOpts, the capacity asked for in its description (rancher-nfs
// takes no size) or its sizeMb (a local-scope driver's); its volume
// context names it for the node; multi-node as its driver is; the same
// request again makes no write, another size is AlreadyExists.
func TestCSICreate(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	params := map[string]string{"driverOpts.onRemove": "retain", "csi.storage.k8s.io/pvc/name": "data",
		"csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-a"}
	a := e.mustCreate("pvc-a", params, 64*mib, true)
	v := e.cloud.volume(t, a.GetVolumeId())
	nfs, _ := e.cloud.sim.StorageDriverByName(ranchersim.DriverRancherNFS)
	if v.Name != "pvc-a" || v.Driver != "rancher-nfs" || v.StorageDriverID != nfs.ID || !maps.Equal(v.DriverOpts, map[string]string{"onRemove": "retain"}) ||
		v.SizeMb != 0 || !strings.Contains(v.Description, "capacity 64 MiB") || !strings.Contains(v.Description, "PersistentVolumeClaim default/data") {
		t.Errorf("the Cattle volume: %+v", v)
	}
	if want := v.ID + "/rancher-nfs/pvc-a"; a.GetVolumeId() != want || a.GetCapacityBytes() != 64*mib || a.GetAccessibleTopology() != nil {
		t.Errorf("volume %v: want ID %s, 64 MiB, no topology", a, want)
	}
	if want := map[string]string{"driver": "rancher-nfs", "name": "pvc-a", "driverOpts.onRemove": "retain"}; !maps.Equal(a.GetVolumeContext(), want) {
		t.Errorf("volume context %v, want %v", a.GetVolumeContext(), want)
	}

	writes := e.cloud.sim.Writes()
	again := e.mustCreate("pvc-a", params, 64*mib, true)
	if again.GetVolumeId() != a.GetVolumeId() || e.cloud.sim.Writes() != writes {
		t.Errorf("CreateVolume again: %v, %d writes; want %s and none", again, e.cloud.sim.Writes()-writes, a.GetVolumeId())
	}
	_, err := e.create("pvc-a", params, 128*mib, true)
	e.d.CheckRefused(t, err, codes.AlreadyExists, "pvc-a")
	if got, err := e.getVolume(a.GetVolumeId()); err != nil || got.GetVolume().GetCapacityBytes() != 64*mib ||
		!maps.Equal(got.GetVolume().GetVolumeContext(), a.GetVolumeContext()) {
		t.Errorf("ControllerGetVolume: %v, %v", got, err)
	}

	// A single-host driver's volume: ReadWriteOnce, and no more.
	ebs := e.mustCreate("pvc-ebs", map[string]string{"driver": "rancher-ebs"}, 0, false)
	if ebs.GetCapacityBytes() != 1<<30 || e.cloud.volume(t, ebs.GetVolumeId()).Driver != "rancher-ebs" {
		t.Errorf("volume of rancher-ebs with no size asked for: %v, want 1 GiB", ebs)
	}
	vc, err := e.d.Controller.ValidateVolumeCapabilities(t.Context(), &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: ebs.GetVolumeId(),
		VolumeCapabilities: []*csipb.VolumeCapability{capability(true)}})
	if err != nil || vc.GetConfirmed() != nil {
		t.Errorf("ValidateVolumeCapabilities ReadWriteMany of a rancher-ebs volume: %v, %v; want not confirmed", vc, err)
	}
	_, err = e.create("pvc-ebs", map[string]string{"driver": "rancher-ebs"}, 0, true)
	e.d.CheckRefused(t, err, codes.AlreadyExists, "single-node")

	// A local-scope driver schedules by size: the volume has its sizeMb.
	e.cloud.sim.AddStorageDriver(ranchersim.StorageDriver{Name: "local-lvm", Scope: ranchersim.ScopeLocal,
		VolumeAccessMode: ranchersim.AccessSingleHostRW})
	lvm := e.mustCreate("pvc-lvm", map[string]string{"driver": "local-lvm"}, 2<<30+1, false)
	if got := e.cloud.volume(t, lvm.GetVolumeId()); got.SizeMb != 2049 || lvm.GetCapacityBytes() != 2049*mib {
		t.Errorf("volume of a local-scope driver: %+v, %d bytes; want 2049 MiB", got, lvm.GetCapacityBytes())
	}

	// A CSI name that is no Docker volume name: a name made of it.
	odd := e.mustCreate("Sanity Vol/1", nil, 0, false)
	if got := e.cloud.volume(t, odd.GetVolumeId()).Name; got != csidriver.VolumeName("Sanity Vol/1") || !strings.HasPrefix(got, "Sanity-Vol-1-") {
		t.Errorf("volume of CSI name %q is named %q", "Sanity Vol/1", got)
	}
}

// TestCSIDuplicateNames: two live volumes of one name are an error, not a
// guess; a removed one does not count.
func TestCSIDuplicateNames(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	for _, d := range []string{"rancher-nfs", "rancher-ebs"} {
		e.cloud.sim.AddVolume(ranchersim.Volume{Name: "pvc-twice", Driver: d})
	}
	_, err := e.create("pvc-twice", nil, 0, false)
	if e.d.Code(err) == codes.OK || !strings.Contains(err.Error(), "several volumes") {
		t.Errorf("CreateVolume of a name two volumes have: %v", err)
	}
	e.cloud.sim.AddVolume(ranchersim.Volume{Name: "pvc-once", Driver: "rancher-nfs", State: ranchersim.StateRemoved})
	if v := e.mustCreate("pvc-once", nil, 0, false); e.cloud.volume(t, v.GetVolumeId()).State == ranchersim.StateRemoved {
		t.Errorf("CreateVolume of a removed volume's name answered it: %v", v)
	}
}

// TestCSIDelete: with Cattle's processes settling on their second read,
// DeleteVolume removes the volume and answers Aborted while Cattle is
// removing it (never waiting), then purges it; a volume containers use is
// FailedPrecondition naming them, until they are gone; deleting again, an
// ID Cattle has for another volume, an unknown or a malformed ID
// succeeds, removing nothing else.
func TestCSIDelete(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: 2})
	a := e.mustCreate("pvc-a", nil, 0, true).GetVolumeId()
	if v := e.cloud.volume(t, a); v.State != ranchersim.StateRegistering {
		t.Errorf("a new volume is %s, want registering", v.State)
	}
	aborted, err := e.d.UntilDone(func() error { return e.deleteVolume(a) })
	if err != nil || aborted == 0 {
		t.Errorf("DeleteVolume: %v after %d Aborted; want success after Aborted while Cattle removes it", err, aborted)
	}
	if v, found := e.cloud.sim.Volume(e.cloud.volume(t, a).ID); found && v.State != ranchersim.StatePurging && v.State != ranchersim.StatePurged {
		t.Errorf("a deleted volume is %s, want purging or purged", v.State)
	}
	if err := e.deleteVolume(a); err != nil {
		t.Errorf("DeleteVolume again: %v", err)
	}
	if _, err := e.getVolume(a); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerGetVolume of a deleted volume: %v, want NotFound", err)
	}

	// In use by containers.
	b := e.mustCreate("pvc-b", nil, 0, true).GetVolumeId()
	e.cloud.sim.Advance()
	bv := e.cloud.volume(t, b)
	m := e.cloud.sim.AddMount(ranchersim.Mount{VolumeID: bv.ID, InstanceName: "web-1", Path: "/data"})
	e.cloud.sim.Advance()
	err = e.deleteVolume(b)
	e.d.CheckRefused(t, err, codes.FailedPrecondition, "web-1:/data")
	e.cloud.sim.RemoveMount(m.ID)

	// IDs that name no volume: nothing removed.
	cattleID, driver, _, _ := csidriver.ParseVolumeID(b)
	before := e.requests()
	for _, id := range []string{"not-a-volume", "1v1/../../x", b + "/more", "1v99x/rancher-nfs/pvc-b"} {
		if err := e.deleteVolume(id); err != nil {
			t.Errorf("DeleteVolume %q: %v", id, err)
		}
	}
	if n := e.requests() - before; n != 0 {
		t.Errorf("%d API requests for malformed IDs", n)
	}
	for _, id := range []string{cattleID + "/" + driver + "/pvc-other", cattleID + "/rancher-ebs/pvc-b", "1v999999/rancher-nfs/pvc-b"} {
		if err := e.deleteVolume(id); err != nil {
			t.Errorf("DeleteVolume %q: %v", id, err)
		}
		if _, err := e.getVolume(id); e.d.Code(err) != codes.NotFound {
			t.Errorf("ControllerGetVolume %q: %v, want NotFound", id, err)
		}
	}
	if v := e.cloud.volume(t, b); v.Removed != nil || v.State == ranchersim.StateRemoving {
		t.Errorf("volume b is %s after deletes of IDs naming other volumes", v.State)
	}
	if _, err := e.d.UntilDone(func() error { return e.deleteVolume(b) }); err != nil {
		t.Errorf("DeleteVolume once its containers are gone: %v", err)
	}
	if live := e.cloud.live(); len(live) > 0 {
		t.Errorf("volumes left: %+v", live)
	}
}

// TestCSINotFound: NotFound only when Cattle said so: a 403, or a 404
// that is not Cattle's (a proxy's page), is an error (a 5xx too, retried
// first, which takes seconds), and DeleteVolume
// does not take it for the volume gone.
func TestCSINotFound(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	a := e.mustCreate("pvc-a", nil, 0, true).GetVolumeId()
	get := ranchersim.Operations["volumes.get"]
	for name, f := range map[string]simkit.Fault{
		"403":         {Op: get, Status: http.StatusForbidden},
		"proxy's 404": {Op: get, Status: http.StatusNotFound, ContentType: "text/html", Body: "<html><body>404 Not Found</body></html>"},
	} {
		remove := e.cloud.sim.Inject(f)
		if _, err := e.getVolume(a); e.d.Code(err) == codes.NotFound || e.d.Code(err) == codes.OK {
			t.Errorf("%s: ControllerGetVolume: %v, want an error other than NotFound", name, err)
		}
		if err := e.deleteVolume(a); e.d.Code(err) == codes.OK {
			t.Errorf("%s: DeleteVolume succeeded", name)
		}
		remove()
	}
	if v := e.cloud.volume(t, a); v.Removed != nil {
		t.Errorf("volume removed on an error: %+v", v)
	}
	if _, err := e.getVolume(a); err != nil {
		t.Errorf("ControllerGetVolume once Cattle answers: %v", err)
	}
}

// TestCSIMalformedAnswers: an answer that is not what the driver asked
// for is an error, never a panic, and the next call works.
func TestCSIMalformedAnswers(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	a := e.mustCreate("pvc-a", nil, 0, true).GetVolumeId()
	ops := ranchersim.Operations
	for _, tc := range []struct {
		name string
		f    simkit.Fault
		call func() error
	}{
		{"truncated volume", simkit.Fault{Op: ops["volumes.get"], Truncate: true}, func() error { _, err := e.getVolume(a); return err }},
		{"another volume", simkit.Fault{Op: ops["volumes.get"], Mutate: func(_ int, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"id":"`+e.cloud.volume(t, a).ID+`"`, `"id":"1v424242"`, 1))
		}}, func() error { _, err := e.getVolume(a); return err }},
		{"storage drivers without data", simkit.Fault{Op: ops["storageDrivers.list"], Mutate: func(int, []byte) []byte {
			return []byte(`{"type":"collection","resourceType":"storageDriver"}`)
		}}, func() error { _, err := e.create("pvc-b", nil, 0, false); return err }},
		{"truncated create", simkit.Fault{Op: ops["volumes.create"], Truncate: true}, func() error { _, err := e.create("pvc-c", nil, 0, false); return err }},
		{"created without an ID", simkit.Fault{Op: ops["volumes.create"], Mutate: func(int, []byte) []byte {
			return []byte(`{"type":"volume","name":"pvc-d"}`)
		}}, func() error { _, err := e.create("pvc-d", nil, 0, false); return err }},
		{"removed at no time", simkit.Fault{Op: ops["volumes.get"], Mutate: func(_ int, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"removed":null`, `"removed":"yesterday"`, 1))
		}}, func() error { return e.deleteVolume(a) }},
		{"truncated remove", simkit.Fault{Op: ops["volumes.action"], Truncate: true}, func() error { return e.deleteVolume(a) }},
	} {
		remove := e.cloud.sim.Inject(tc.f)
		if err := tc.call(); e.d.Code(err) != codes.Internal {
			t.Errorf("%s: %v, want Internal", tc.name, err)
		}
		remove()
	}
	if _, err := e.create("pvc-b", nil, 0, false); err != nil {
		t.Errorf("CreateVolume once Cattle answers well: %v", err)
	}
	if _, err := e.d.UntilDone(func() error { return e.deleteVolume(a) }); err != nil {
		t.Errorf("DeleteVolume once Cattle answers well: %v", err)
	}
}

// TestCSIListVolumes: the volumes of storage drivers that are not
// removed; Docker's local volumes (no plugin to mount them) are not.
func TestCSIListVolumes(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	a := e.mustCreate("pvc-a", nil, 0, true).GetVolumeId()
	b := e.mustCreate("pvc-b", map[string]string{"driver": "rancher-ebs"}, 0, false).GetVolumeId()
	if _, err := e.d.UntilDone(func() error { return e.deleteVolume(b) }); err != nil {
		t.Fatal(err)
	}
	e.cloud.sim.AddVolume(ranchersim.Volume{Name: "web-data", Driver: ranchersim.DriverLocal})
	hand := e.cloud.sim.AddVolume(ranchersim.Volume{Name: "shared", Driver: "rancher-nfs"})
	list, err := e.d.Controller.ListVolumes(t.Context(), &csipb.ListVolumesRequest{})
	var got []string
	for _, entry := range list.GetEntries() {
		got = append(got, entry.GetVolume().GetVolumeId())
	}
	if want := []string{a, hand.ID + "/rancher-nfs/shared"}; err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ListVolumes: %v, %v; want %v", got, err, want)
	}
}

// TestCSICredentials: the controller takes the CCM's settings (the secret
// key also from a file); missing or wrong ones stop it with an error
// naming the settings, never the secret; a node plugin needs none, but
// its node name; bad settings are named.
func TestCSICredentials(t *testing.T) {
	cloud := newCSICloud(t, ranchersim.Options{}, 1)
	serve := func(mode csi.Mode, env map[string]string, secrets ...string) error {
		t.Helper()
		return csitest.ServeUntilListening(t, cloud.provider(0, env), mode, append(secrets, csiSecret)...)
	}
	if err := serve(csi.ModeController, map[string]string{"NODE_NAME": ""}); err != nil {
		t.Errorf("controller with the CCM's settings: %v", err)
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(csiSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve(csi.ModeController, map[string]string{"CATTLE_SECRET_KEY": "", "CATTLE_SECRET_KEY_FILE": file}); err != nil {
		t.Errorf("controller with CATTLE_SECRET_KEY_FILE: %v", err)
	}
	const wrong = "wrong-secret-never-print"
	err := serve(csi.ModeController, map[string]string{"CATTLE_SECRET_KEY": wrong}, wrong)
	if err == nil || !strings.Contains(err.Error(), "CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API") {
		t.Errorf("controller with a wrong secret key: %v", err)
	}
	none := map[string]string{"CATTLE_URL": "", "CATTLE_ACCESS_KEY": "", "CATTLE_SECRET_KEY": ""}
	err = serve(csi.ModeController, none)
	for _, want := range []string{"CATTLE_URL: required by the controller", "CATTLE_ACCESS_KEY: required", "CATTLE_SECRET_KEY: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("controller without settings: %v, want %q", err, want)
		}
	}
	err = serve(csi.ModeController, map[string]string{"CATTLE_SECRET_KEY": ""})
	if err == nil || !strings.Contains(err.Error(), "CATTLE_SECRET_KEY: required") || strings.Contains(err.Error(), "CATTLE_URL") {
		t.Errorf("controller without its secret key: %v", err)
	}
	// A node plugin without credentials; a process serving both serves
	// the node side, and answers controller calls FailedPrecondition.
	if err := serve(csi.ModeNode, none); err != nil {
		t.Errorf("node plugin without credentials: %v", err)
	}
	d := csitest.StartDriver(t, csi.Options{Provider: cloud.provider(0, none)}, 0)
	if _, err := d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-a",
		VolumeCapabilities: []*csipb.VolumeCapability{capability(false)}}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("CreateVolume without credentials: %v, want FailedPrecondition", err)
	}
	info, err := d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != "node-1" || info.GetAccessibleTopology() != nil || info.GetMaxVolumesPerNode() != 0 {
		t.Errorf("NodeGetInfo: %v, %v; want node-1, no topology, no limit", info, err)
	}
	// Each bad setting named.
	for _, tc := range []struct {
		mode csi.Mode
		env  map[string]string
		want string
	}{
		{csi.ModeNode, map[string]string{"NODE_NAME": ""}, "NODE_NAME: required by the node plugin"},
		{csi.ModeAll, map[string]string{"NODE_NAME": ""}, "NODE_NAME: required by the node plugin"},
		{csi.ModeNode, map[string]string{"NODE_NAME": "Node_1"}, "NODE_NAME: \"Node_1\" is not a Kubernetes node name"},
		{csi.ModeNode, map[string]string{"RANCHER_VOLUME_PLUGIN_DIR": "run/plugins"}, "RANCHER_VOLUME_PLUGIN_DIR"},
		{csi.ModeController, map[string]string{"CATTLE_URL": "ftp://rancher"}, "CATTLE_URL"},
		{csi.ModeController, map[string]string{"CATTLE_URL": cloud.sim.URL() + "/v2-beta/projects/1a999"}, "CATTLE_URL"},
	} {
		if err := serve(tc.mode, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %v: %v, want %q", tc.mode, tc.env, err, tc.want)
		}
	}
}

// TestCSIVolumeIDs: an ID is <Cattle volume ID>/<driver>/<name>, each
// part checked; anything else names no volume.
func TestCSIVolumeIDs(t *testing.T) {
	for id, want := range map[string][3]string{
		"1v12/rancher-nfs/pvc-6f1f8a4e":                {"1v12", "rancher-nfs", "pvc-6f1f8a4e"},
		"1v1/rancher-ebs/db.data_1":                    {"1v1", "rancher-ebs", "db.data_1"},
		"1v12/rancher-nfs":                             {},
		"1v12/rancher-nfs/pvc/x":                       {},
		"1h12/rancher-nfs/pvc":                         {},
		"1v/rancher-nfs/pvc":                           {},
		"1v12/../pvc":                                  {},
		"1v12/.hidden/pvc":                             {},
		"1v12/rancher-nfs/-x":                          {},
		"1v12/rancher-nfs/x":                           {},
		"1v12/rancher-nfs/a b":                         {},
		"1v12//pvc":                                    {},
		"1v12/rancher-nfs/" + strings.Repeat("n", 112): {},
	} {
		c, d, n, ok := csidriver.ParseVolumeID(id)
		if got := [3]string{c, d, n}; ok != (want != [3]string{}) || got != want {
			t.Errorf("ParseVolumeID(%q) = %v, %v; want %v", id, got, ok, want)
		}
	}
	// A CSI name is the volume's when it is a Docker volume name of at
	// most 64 bytes; else a name made of it, the same every time,
	// different for different names.
	const pvc = "pvc-6f1f8a4e-7b0c-4c5e-9d5e-1b7b9e0c2d3f"
	if got := csidriver.VolumeName(pvc); got != pvc {
		t.Errorf("VolumeName(%s) = %s", pvc, got)
	}
	seen := map[string]string{}
	for _, name := range []string{"Sanity Vol", "_x", "x", "ü", strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("x", 300),
		strings.Repeat("x", 299) + "y"} {
		got := csidriver.VolumeName(name)
		if _, _, _, ok := csidriver.ParseVolumeID("1v12345678/" + strings.Repeat("d", 48) + "/" + got); !ok || got != csidriver.VolumeName(name) {
			t.Errorf("VolumeName(%q) = %q: not an ID's name of 128 bytes at most, or not stable", name, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("VolumeName(%q) = VolumeName(%q)", name, prev)
		}
		seen[got] = name
	}
	if csidriver.MountID("/a") == csidriver.MountID("/b") || len(csidriver.MountID("/a")) != 64 {
		t.Errorf("MountID: %s, %s", csidriver.MountID("/a"), csidriver.MountID("/b"))
	}
}

// TestCSIParameters: the parameters documented are the ones taken.
func TestCSIParameters(t *testing.T) {
	p := csidriver.New()
	ok := map[string]string{"driver": "rancher-ebs", "driverOpts.size": "10", "driverOpts.volumeType": "gp2",
		"csi.storage.k8s.io/pvc/name": "a", "csi.storage.k8s.io/pvc/namespace": "b", "csi.storage.k8s.io/pv/name": "c"}
	if err := p.ValidateParameters(ok); err != nil {
		t.Errorf("ValidateParameters(%v): %v", ok, err)
	}
	for k := range csidriver.Parameters {
		for _, key := range strings.Split(k, ", ") {
			key = strings.Replace(key, "<key>", "any", 1)
			if err := p.ValidateParameters(map[string]string{key: "rancher-nfs"}); err != nil {
				t.Errorf("documented parameter %s: %v", key, err)
			}
		}
	}
	if got := fmt.Sprint(p.ValidateParameters(map[string]string{"Driver": "x"})); !strings.Contains(got, "Driver: unknown parameter") {
		t.Errorf("a parameter in another case: %s", got)
	}
}

// TestCSIAPICalls: what a volume's lifecycle costs, from ranchersim's
// request counts, with Cattle settling at once: CreateVolume is the
// lookup by name, the storage drivers and the POST; again, the lookup
// and the driver's access mode; DeleteVolume the GET, remove and purge.
func TestCSIAPICalls(t *testing.T) {
	e := startController(t, ranchersim.Options{ProvisioningReads: -1})
	ops := ranchersim.Operations
	for _, step := range []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"CreateVolume", func() error { _, err := e.create("pvc-a", nil, 0, true); return err },
			map[string]int{ops["volumes.list"]: 1, ops["storageDrivers.list"]: 1, ops["volumes.create"]: 1}},
		{"CreateVolume again", func() error { _, err := e.create("pvc-a", nil, 0, true); return err },
			map[string]int{ops["volumes.list"]: 1, ops["storageDrivers.list"]: 1}},
		{"DeleteVolume", func() error { return e.deleteVolume(e.cloud.live()[0].ID + "/rancher-nfs/pvc-a") },
			map[string]int{ops["volumes.get"]: 1, ops["volumes.action"]: 2}},
	} {
		before := e.cloud.sim.Stats()
		if err := step.call(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := csitest.DiffStats(before, e.cloud.sim.Stats()); !maps.Equal(got, step.want) {
			t.Errorf("%s called %v, want %v", step.name, got, step.want)
		}
	}
}
