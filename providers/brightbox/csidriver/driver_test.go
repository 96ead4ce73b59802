package csidriver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// controllerEnv is a driver serving the controller and node services (no
// node calls are made: no loop devices) against a gbsim, logging at
// -v=10; the client secret must be in no log line and no error it
// recorded.
type controllerEnv struct {
	t     *testing.T
	cloud *csiCloud
	p     *csidriver.Driver
	d     *csitest.LoggedDriver
}

func startController(t *testing.T, opts gbsim.Options) *controllerEnv {
	t.Helper()
	e := &controllerEnv{t: t, cloud: newCSICloud(t, opts)}
	e.p = e.cloud.provider(nil)
	e.d = csitest.StartLogged(t, e.p, csiSecret)
	return e
}

func (e *controllerEnv) createVolume(name string, params map[string]string) string {
	e.t.Helper()
	vol, err := e.d.Controller.CreateVolume(e.t.Context(), &csipb.CreateVolumeRequest{Name: name, Parameters: params,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 40 * gib}, VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("ext4")}})
	if err != nil {
		e.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return vol.GetVolume().GetVolumeId()
}

func (e *controllerEnv) deleteVolume(id string) error {
	_, err := e.d.Controller.DeleteVolume(e.t.Context(), &csipb.DeleteVolumeRequest{VolumeId: id})
	return err
}

// retried calls f until it answers anything but Aborted, as a sidecar
// does, and returns how often it was Aborted.
func (e *controllerEnv) retried(what string, f func() error) int {
	e.t.Helper()
	aborted, err := e.d.UntilDone(f)
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	return aborted
}

// TestCSIBadInput: every invalid StorageClass parameter and size is
// answered with the spec's code and a message naming it, before any API
// call; the sizes are Brightbox's, 40 GiB to 4 TiB.
func TestCSIBadInput(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1})
	e.d.CheckBadCreates(t, e.cloud.sim.Kit().Served, []csitest.BadCreate{
		{Name: "unknown parameter", Parameters: map[string]string{"type": "ssd"}, Want: codes.InvalidArgument, Naming: []string{"type", "unknown parameter"}},
		{Name: "fstype", Parameters: map[string]string{"fstype": "btrfs"}, Want: codes.InvalidArgument, Naming: []string{"fstype", "btrfs"}},
		{Name: "fstype in another case", Parameters: map[string]string{"FsType": "ntfs"}, Want: codes.InvalidArgument, Naming: []string{"FsType", "ntfs"}},
		{Name: "csi fstype", Parameters: map[string]string{"csi.storage.k8s.io/fstype": "zfs"}, Want: codes.InvalidArgument,
			Naming: []string{"csi.storage.k8s.io/fstype", "zfs"}},
		{Name: "encrypted", Parameters: map[string]string{"encrypted": "maybe"}, Want: codes.InvalidArgument, Naming: []string{"encrypted", "maybe"}},
		{Name: "zone", Parameters: map[string]string{"zone": "gb1-a", "fstype": "ext3", "csi.storage.k8s.io/pvc/name": "ok"}, Want: codes.InvalidArgument,
			Naming: []string{"zone", "fstype", "ext3"}},
		{Name: "larger than 4 TiB", CapacityRange: &csipb.CapacityRange{RequiredBytes: 4<<40 + 1}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
		{Name: "limit below 40 GiB", CapacityRange: &csipb.CapacityRange{LimitBytes: 39 * gib}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
		{Name: "no GiB between required and limit", CapacityRange: &csipb.CapacityRange{RequiredBytes: 40*gib + 1, LimitBytes: 41*gib - 1}, Want: codes.OutOfRange,
			Naming: []string{"capacity_range"}},
		{Name: "negative", CapacityRange: &csipb.CapacityRange{RequiredBytes: -1}, Want: codes.InvalidArgument, Naming: []string{"capacity_range"}},
	})
	// What external-provisioner passes on is taken; no size asked for is
	// Brightbox's smallest; a size between GiB is rounded up.
	vol, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-good", VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("xfs")},
		Parameters: map[string]string{"fstype": "xfs", "encrypted": "true", "csi.storage.k8s.io/pvc/name": "data",
			"csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-good"}})
	if err != nil {
		t.Fatalf("CreateVolume with the parameters external-provisioner passes: %v", err)
	}
	v := e.cloud.volume(t, vol.GetVolume().GetVolumeId())
	if got := vol.GetVolume().GetCapacityBytes(); got != 40*gib || v.Size != 40960 || !v.Encrypted || v.Name != "pvc-good" ||
		v.FilesystemType != "" || v.Serial != v.ID || !strings.HasPrefix(v.Description, "Created by the Brightbox CSI driver") ||
		vol.GetVolume().GetAccessibleTopology() != nil {
		t.Errorf("volume %d bytes, %+v: want 40 GiB (40960 MiB), encrypted, named, not pre-formatted, its ID as serial, the driver's description, no topology", got, v)
	}
	odd, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-odd", VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")},
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 50*gib + 1}})
	if err != nil || odd.GetVolume().GetCapacityBytes() != 51*gib || e.cloud.volume(t, odd.GetVolume().GetVolumeId()).Size != 51*1024 {
		t.Errorf("CreateVolume of 50 GiB and a byte: %v, %v; want 51 GiB", odd, err)
	}
	// A volume ID or node ID from elsewhere: NotFound, InvalidArgument,
	// without an API request.
	requests := len(e.cloud.sim.Requests())
	if _, err := e.d.Publish("../../accounts", e.cloud.node()); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume of a volume ID with a path: %v, want NotFound", err)
	}
	if _, err := e.d.Publish(vol.GetVolume().GetVolumeId(), "node-1"); e.d.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "srv-xxxxx") {
		t.Errorf("ControllerPublishVolume to a node ID that is not a server ID: %v, want InvalidArgument", err)
	}
	if n := len(e.cloud.sim.Requests()) - requests; n != 0 {
		t.Errorf("%d API requests for IDs that name nothing", n)
	}
}

// TestCSIAttach: a volume attached to another server is
// FailedPrecondition, a server with Brightbox's 6 volumes
// ResourceExhausted, a missing server NotFound; attaching it again where
// it is needs no write; the publish context carries the volume's serial,
// from which the node finds its device.
func TestCSIAttach(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1})
	other := e.cloud.sim.AddServer(gbsim.CloudServer{Name: "node-2"})
	a := e.createVolume("pvc-a", nil)
	pub, err := e.d.Publish(a, e.cloud.node())
	if err != nil {
		t.Fatalf("ControllerPublishVolume: %v", err)
	}
	if got := pub.GetPublishContext(); !maps.Equal(got, map[string]string{"csi.brightbox.com/serial": a}) {
		t.Errorf("publish context %v", got)
	}
	if dev, err := e.p.DevicePath("/dev/disk/by-id", a, pub.GetPublishContext()); err != nil || dev != "/dev/disk/by-id/virtio-"+a {
		t.Errorf("DevicePath: %s, %v", dev, err)
	}
	writes := e.cloud.sim.Writes()
	if again, err := e.d.Publish(a, e.cloud.node()); err != nil || !maps.Equal(again.GetPublishContext(), pub.GetPublishContext()) {
		t.Errorf("ControllerPublishVolume again: %v, %v", again, err)
	}
	if w := e.cloud.sim.Writes() - writes; w != 0 {
		t.Errorf("publishing an attached volume again wrote %d times", w)
	}
	_, err = e.d.Publish(a, other.ID)
	if e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), e.cloud.node()) {
		t.Errorf("ControllerPublishVolume to another server: %v, want FailedPrecondition naming server %s", err, e.cloud.node())
	}
	b := e.createVolume("pvc-b", nil)
	_, err = e.d.Publish(b, "srv-nope0")
	if e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume to a server that does not exist: %v, want NotFound", err)
	}
	// Deleting an attached volume: FailedPrecondition.
	if err := e.deleteVolume(a); e.d.Code(err) != codes.FailedPrecondition {
		t.Errorf("DeleteVolume of an attached volume: %v, want FailedPrecondition", err)
	}
	// Unpublishing from a server it is not attached to, or from one that
	// does not exist: nothing to do.
	for _, n := range []string{other.ID, "srv-nope0", "not-a-server"} {
		if err := e.d.Unpublish(a, n); err != nil {
			t.Errorf("ControllerUnpublishVolume from %s: %v", n, err)
		}
	}
	if v := e.cloud.volume(t, a); v.Server != e.cloud.node() {
		t.Errorf("volume a is attached to %q", v.Server)
	}
	// The server takes 6 volumes.
	for i := range 5 {
		if _, err := e.d.Publish(e.createVolume(fmt.Sprintf("pvc-%d", i), nil), e.cloud.node()); err != nil {
			t.Fatalf("ControllerPublishVolume of volume %d: %v", i+2, err)
		}
	}
	_, err = e.d.Publish(b, e.cloud.node())
	if e.d.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "6") {
		t.Errorf("ControllerPublishVolume of a 7th volume: %v, want ResourceExhausted", err)
	}
	// A volume made by hand with a serial of its own: the publish
	// context has it, and the device is named by it.
	hand, err := e.cloud.sim.AddVolume(gbsim.Volume{Serial: "data-disk"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err = e.d.Publish(hand.ID, other.ID)
	if err != nil || pub.GetPublishContext()["csi.brightbox.com/serial"] != "data-disk" {
		t.Fatalf("ControllerPublishVolume of a volume with its own serial: %v, %v", pub, err)
	}
	if dev, err := e.p.DevicePath("/dev/disk/by-id", hand.ID, pub.GetPublishContext()); err != nil || dev != "/dev/disk/by-id/virtio-data-disk" {
		t.Errorf("DevicePath: %s, %v", dev, err)
	}
}

// TestCSIDevicePath: the device is virtio-<serial>, the serial from the
// publish context or else the volume ID; a serial that could leave the
// by-id directory is refused.
func TestCSIDevicePath(t *testing.T) {
	p := csidriver.New()
	for _, tc := range []struct {
		id   string
		pc   map[string]string
		want string
	}{
		{"vol-abc12", map[string]string{"csi.brightbox.com/serial": "vol-abc12"}, "/by-id/virtio-vol-abc12"},
		{"vol-abc12", nil, "/by-id/virtio-vol-abc12"},
		{"vol-abc12", map[string]string{"csi.brightbox.com/serial": "my.serial+1"}, "/by-id/virtio-my.serial+1"},
		{"vol-abc12", map[string]string{"csi.brightbox.com/serial": "../../sda"}, ""},
		{"vol-abc12", map[string]string{"csi.brightbox.com/serial": strings.Repeat("s", 21)}, ""},
		{"../x", nil, ""},
	} {
		got, err := p.DevicePath("/by-id", tc.id, tc.pc)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("DevicePath(%s, %v) = %q, %v; want %q", tc.id, tc.pc, got, err, tc.want)
		}
	}
}

// TestCSIAsync: with gbsim's volumes, attaches and detaches settling on
// their second read, attach and detach are answered Aborted and never
// waited for; a retry while the API works reads the volume and sends
// nothing again; a resize is done at once.
func TestCSIAsync(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: 2})
	node := e.cloud.node()
	a := e.createVolume("pvc-a", nil)
	if v := e.cloud.volume(t, a); v.Status != gbsim.StatusCreating {
		t.Errorf("a new volume is %s, want creating", v.Status)
	}
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "being created") {
		t.Errorf("ControllerPublishVolume of a volume being created: %v, want Aborted", err)
	}
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "accepted") {
		t.Errorf("ControllerPublishVolume once created: %v, want Aborted (the attach accepted)", err)
	}
	before := e.cloud.sim.Stats()
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerPublishVolume retried: %v, want Aborted (the attach's first read)", err)
	}
	if _, err := e.d.Publish(a, node); err != nil {
		t.Errorf("ControllerPublishVolume retried again: %v, want success", err)
	}
	if got := csitest.DiffStats(before, e.cloud.sim.Stats()); !maps.Equal(got, map[string]int{"GET /1.0/volumes/{id}": 2}) {
		t.Errorf("the retries called %v; want one GET of the volume each", got)
	}
	if e.p.PendingOps() != 0 {
		t.Errorf("%d operations still waited for", e.p.PendingOps())
	}

	// Resize: at once, attached.
	got, err := e.d.Controller.ControllerExpandVolume(t.Context(), &csipb.ControllerExpandVolumeRequest{VolumeId: a,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 41 * gib}})
	if err != nil || got.GetCapacityBytes() != 41*gib || !got.GetNodeExpansionRequired() || e.cloud.volume(t, a).Size != 41*1024 {
		t.Errorf("ControllerExpandVolume: %v, %v; want 41 GiB and node expansion", got, err)
	}

	// Detach, and an attach while the detach runs: Aborted until it is
	// done, then attached again.
	if err := e.d.Unpublish(a, node); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerUnpublishVolume: %v, want Aborted while the detach runs", err)
	}
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerPublishVolume while the detach runs: %v, want Aborted", err)
	}
	e.retried("ControllerPublishVolume after the detach", func() error { _, err := e.d.Publish(a, node); return err })
	if v := e.cloud.volume(t, a); v.Server != node {
		t.Errorf("volume a is attached to %q after detach then attach", v.Server)
	}

	// A detach waits for an attach this controller sent.
	b := e.createVolume("pvc-b", nil)
	e.cloud.sim.Advance()
	if _, err := e.d.Publish(b, node); e.d.Code(err) != codes.Aborted {
		t.Fatalf("ControllerPublishVolume: %v, want Aborted", err)
	}
	if err := e.d.Unpublish(b, node); e.d.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "must end before the detach") {
		t.Errorf("ControllerUnpublishVolume while the attach runs: %v, want Aborted", err)
	}
	e.retried("ControllerUnpublishVolume", func() error { return e.d.Unpublish(b, node) })
	if v := e.cloud.volume(t, b); v.Server != "" {
		t.Errorf("volume b is attached to %s after the unpublish", v.Server)
	}
	// Deleted: Aborted never; the volume is deleting, then gone.
	e.retried("DeleteVolume", func() error { return e.deleteVolume(b) })
	if v := e.cloud.volume(t, b); v.Status != gbsim.StatusDeleting {
		t.Errorf("volume b is %s, want deleting", v.Status)
	}
	if err := e.deleteVolume(b); err != nil {
		t.Errorf("DeleteVolume again: %v", err)
	}
}

// TestCSIDroppedAttach: an attach the cloud dropped (the volume stays
// detached) is waited for AttachWait, then sent again.
func TestCSIDroppedAttach(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: 1000})
	now := time.Now()
	e.p.SetClock(func() time.Time { return now })
	a := e.createVolume("pvc-a", nil)
	e.cloud.sim.Advance()
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) != codes.Aborted {
		t.Fatalf("ControllerPublishVolume: %v, want Aborted", err)
	}
	e.cloud.sim.SetVolumeStatus(a, "detached") // the cloud forgets the attach
	writes := e.cloud.sim.Writes()
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) != codes.Aborted || e.cloud.sim.Writes() != writes {
		t.Errorf("ControllerPublishVolume within AttachWait: %v, %d writes; want Aborted and none", err, e.cloud.sim.Writes()-writes)
	}
	now = now.Add(csidriver.AttachWait)
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) != codes.Aborted || e.cloud.sim.Writes() != writes+1 {
		t.Errorf("ControllerPublishVolume after AttachWait: %v, %d writes; want Aborted and the attach sent again", err, e.cloud.sim.Writes()-writes)
	}
	e.cloud.sim.Advance()
	if _, err := e.d.Publish(a, e.cloud.node()); err != nil {
		t.Errorf("ControllerPublishVolume once attached: %v", err)
	}
}

// TestCSILockedVolume: a locked volume is not deleted, and the error says
// why; unlocked, it is.
func TestCSILockedVolume(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1})
	v, err := e.cloud.sim.AddVolume(gbsim.Volume{Name: "pvc-locked", Locked: true})
	if err != nil {
		t.Fatal(err)
	}
	err = e.deleteVolume(v.ID)
	if e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "locked") || !strings.Contains(err.Error(), "unlock") {
		t.Errorf("DeleteVolume of a locked volume: %v, want FailedPrecondition saying it is locked", err)
	}
	unlockVolume(t, e.cloud, v.ID)
	if err := e.deleteVolume(v.ID); err != nil {
		t.Errorf("DeleteVolume once unlocked: %v", err)
	}
	// Gone: deleting again, or a volume that never was, succeeds.
	for _, id := range []string{v.ID, "vol-nope0", "not-a-volume"} {
		if err := e.deleteVolume(id); err != nil {
			t.Errorf("DeleteVolume %s: %v", id, err)
		}
	}
}

// unlockVolume unlocks volume id through the API, as a user would.
func unlockVolume(t *testing.T, c *csiCloud, id string) {
	t.Helper()
	tok := apiToken(t, c)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, c.sim.URL()+"/1.0/volumes/"+id+"/unlock_resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("unlock: %s", resp.Status)
	}
}

// apiToken is an access token of the cloud's API client.
func apiToken(t *testing.T, c *csiCloud) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.sim.URL()+"/token/",
		strings.NewReader("grant_type=client_credentials"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(c.sim.ClientID(), c.sim.ClientSecret())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.AccessToken == "" {
		t.Fatalf("token: %s, %v", resp.Status, err)
	}
	return body.AccessToken
}

// TestCSIListVolumes: the account's volumes but for boot volumes and
// deleted ones.
func TestCSIListVolumes(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1, DeletedReads: 1000})
	stopped := e.cloud.sim.AddServer(gbsim.CloudServer{Name: "stopped", Status: gbsim.StatusInactive})
	if _, err := e.cloud.sim.AddVolume(gbsim.Volume{Name: "boot", Server: stopped.ID, Boot: true}); err != nil {
		t.Fatal(err)
	}
	a, b := e.createVolume("pvc-a", nil), e.createVolume("pvc-b", nil)
	if err := e.deleteVolume(b); err != nil {
		t.Fatal(err)
	}
	list, err := e.d.Controller.ListVolumes(t.Context(), &csipb.ListVolumesRequest{})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetVolumeId() != a {
		t.Errorf("ListVolumes: %v, %v; want %s only", list, err, a)
	}
	// A deleted volume is not found, and its name is free again.
	if _, err := e.d.Controller.ControllerGetVolume(t.Context(), &csipb.ControllerGetVolumeRequest{VolumeId: b}); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerGetVolume of a deleted volume: %v, want NotFound", err)
	}
	if again := e.createVolume("pvc-b", nil); again == b {
		t.Errorf("CreateVolume pvc-b after its deletion: the deleted volume %s", b)
	}
}

// TestCSIDuplicateNames: two volumes of one name are an error, not a
// guess; a failed one is an error that says what to do.
func TestCSIDuplicateNames(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1})
	for range 2 {
		if _, err := e.cloud.sim.AddVolume(gbsim.Volume{Name: "pvc-twice"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-twice",
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
	if e.d.Code(err) == codes.OK || !strings.Contains(err.Error(), "several volumes") {
		t.Errorf("CreateVolume of a name two volumes have: %v", err)
	}
	if _, err := e.cloud.sim.AddVolume(gbsim.Volume{Name: "pvc-failed", Status: gbsim.StatusFailed}); err != nil {
		t.Fatal(err)
	}
	_, err = e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-failed",
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
	if e.d.Code(err) == codes.OK || !strings.Contains(err.Error(), "has failed: delete it") {
		t.Errorf("CreateVolume of a name a failed volume has: %v", err)
	}
}

// TestCSIMalformedAnswers: an answer gobrightbox cannot decode, or one
// about another volume, is an error; the driver does not panic, and the
// next call works.
func TestCSIMalformedAnswers(t *testing.T) {
	e := startController(t, gbsim.Options{ProvisioningReads: -1})
	a := e.createVolume("pvc-a", nil)
	remove := e.cloud.sim.CorruptStatus("GET /1.0/volumes/{id}", 1)
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) != codes.Internal {
		t.Errorf("ControllerPublishVolume with a corrupt volume: %v, want Internal", err)
	}
	remove()
	e.cloud.sim.Inject(gbsim.Fault{Op: "GET /1.0/volumes", Truncate: true, Count: 1})
	if _, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-b",
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}}); e.d.Code(err) != codes.Internal {
		t.Errorf("CreateVolume with a truncated list: %v, want Internal", err)
	}
	e.cloud.sim.Inject(gbsim.Fault{Op: "POST /1.0/volumes/{id}/attach", Status: http.StatusBadRequest, Count: 1})
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) == codes.OK {
		t.Error("ControllerPublishVolume with the attach refused: no error")
	}
	if _, err := e.d.Publish(a, e.cloud.node()); err != nil {
		t.Errorf("ControllerPublishVolume retried: %v", err)
	}
	if len(e.cloud.sim.Volumes()) != 1 {
		t.Errorf("volumes: %v", e.cloud.sim.Volumes())
	}
}

// TestCSICredentials: the controller takes the CCM's credentials (an API
// client, its secret from a file, or a user); wrong or missing ones stop
// it with an error that names the setting, not the secret; a node plugin
// needs none, but its server ID; every bad setting is named at once.
func TestCSICredentials(t *testing.T) {
	cloud := newCSICloud(t, gbsim.Options{})
	serve := func(mode csi.Mode, env map[string]string, secrets ...string) error {
		t.Helper()
		return csitest.ServeUntilListening(t, cloud.provider(env), mode, append(secrets, csiSecret)...)
	}
	if err := serve(csi.ModeController, nil); err != nil {
		t.Errorf("controller with BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET: %v", err)
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(csiSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve(csi.ModeController, map[string]string{"BRIGHTBOX_CLIENT_SECRET": "", "BRIGHTBOX_CLIENT_SECRET_FILE": file}); err != nil {
		t.Errorf("controller with BRIGHTBOX_CLIENT_SECRET_FILE: %v", err)
	}
	user := cloud.sim.UserEnv(cloud.sim.URL())
	if err := serve(csi.ModeController, map[string]string{"BRIGHTBOX_CLIENT": "", "BRIGHTBOX_CLIENT_SECRET": "",
		"BRIGHTBOX_USER_NAME": user["BRIGHTBOX_USER_NAME"], "BRIGHTBOX_PASSWORD": user["BRIGHTBOX_PASSWORD"]}, user["BRIGHTBOX_PASSWORD"]); err != nil {
		t.Errorf("controller with BRIGHTBOX_USER_NAME and BRIGHTBOX_PASSWORD: %v", err)
	}
	const wrong = "wrong-secret-never-print"
	err := serve(csi.ModeController, map[string]string{"BRIGHTBOX_CLIENT_SECRET": wrong}, wrong)
	if err == nil || !strings.Contains(err.Error(), "check BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET") {
		t.Errorf("controller with a wrong secret: %v", err)
	}
	err = serve(csi.ModeController, map[string]string{"BRIGHTBOX_ACCOUNT": "acc-nope0"})
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_ACCOUNT") {
		t.Errorf("controller with an account the client cannot use: %v", err)
	}
	noCredentials := map[string]string{"BRIGHTBOX_CLIENT": "", "BRIGHTBOX_CLIENT_SECRET": ""}
	err = serve(csi.ModeController, noCredentials)
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_CLIENT: the controller needs credentials") {
		t.Errorf("controller without credentials: %v", err)
	}
	err = serve(csi.ModeController, map[string]string{"BRIGHTBOX_CLIENT_SECRET": ""})
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_CLIENT_SECRET: required with BRIGHTBOX_CLIENT") {
		t.Errorf("controller without the client's secret: %v", err)
	}
	// A node plugin without credentials, in mode node or all.
	for _, mode := range []csi.Mode{csi.ModeNode, csi.ModeAll} {
		if err := serve(mode, noCredentials); err != nil {
			t.Errorf("%s without credentials: %v", mode, err)
		}
	}
	// A node plugin off a server: the error names the setting.
	err = serve(csi.ModeNode, map[string]string{"BRIGHTBOX_METADATA_URL": cloud.sim.URL() + "/_sim/metadata/srv-nope0"})
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_METADATA_URL") {
		t.Errorf("node plugin without metadata: %v", err)
	}
	// Bad settings, each named.
	err = serve(csi.ModeController, map[string]string{"BRIGHTBOX_VOLUME_LIMIT": "-1", "BRIGHTBOX_API_URL": "ftp://x",
		"BRIGHTBOX_METADATA_URL": "file:///etc/passwd", "BRIGHTBOX_ACCOUNT": "x"})
	for _, want := range []string{"BRIGHTBOX_VOLUME_LIMIT", "BRIGHTBOX_API_URL", "BRIGHTBOX_METADATA_URL", "BRIGHTBOX_ACCOUNT"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad settings: %v, want %s named", err, want)
		}
	}
	err = serve(csi.ModeNode, map[string]string{"BRIGHTBOX_VOLUME_LIMIT": "many"})
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_VOLUME_LIMIT") {
		t.Errorf("BRIGHTBOX_VOLUME_LIMIT=many: %v", err)
	}
}

// TestCSIVolumeLimit: NodeGetInfo reports BRIGHTBOX_VOLUME_LIMIT, 6 by
// default, and the server ID, without topology.
func TestCSIVolumeLimit(t *testing.T) {
	cloud := newCSICloud(t, gbsim.Options{})
	for env, want := range map[string]int64{"": 6, "5": 5, "0": 0} {
		d := csitest.StartDriver(t, csi.Options{Provider: cloud.provider(map[string]string{"BRIGHTBOX_VOLUME_LIMIT": env})}, 0)
		info, err := d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
		if err != nil || info.GetMaxVolumesPerNode() != want || info.GetNodeId() != cloud.node() || info.GetAccessibleTopology() != nil {
			t.Errorf("BRIGHTBOX_VOLUME_LIMIT=%q: NodeGetInfo %v, %v; want %s, %d volumes, no topology", env, info, err, cloud.node(), want)
		}
	}
}

// TestCSIAPICallsPerLifecycle counts the API calls of 20 volumes'
// lifecycle (CreateVolume, ControllerPublishVolume,
// ControllerUnpublishVolume, DeleteVolume, each retried while Aborted as
// the sidecars do) from gbsim's request counts: with the API done at once
// and with volumes, attaches and detaches settling on their second read.
func TestCSIAPICallsPerLifecycle(t *testing.T) {
	const volumes = 20
	for _, tc := range []struct {
		name  string
		reads int
	}{{"done at once", -1}, {"done on the second read", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startController(t, gbsim.Options{ProvisioningReads: tc.reads, DeletedReads: -1})
			e.d.Lifecycle(t, volumes, e.cloud.node(), func(i int) *csipb.CreateVolumeRequest {
				return &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}}
			}, e.cloud.sim.Stats)
			for _, v := range e.cloud.sim.Volumes() {
				if v.Status != gbsim.StatusDeleting && v.Status != gbsim.StatusDeleted {
					t.Errorf("volume left: %+v", v)
				}
			}
		})
	}
}

// TestCSIVolumeName: a CSI name of up to 255 bytes is the volume's name;
// a longer one is made into one, the same every time, different for
// different names.
func TestCSIVolumeName(t *testing.T) {
	const pvc = "pvc-6f1f8a4e-7b0c-4c5e-9d5e-1b7b9e0c2d3f"
	if got := csidriver.VolumeName(pvc); got != pvc {
		t.Errorf("VolumeName(%s) = %s", pvc, got)
	}
	seen := map[string]string{}
	for _, name := range []string{"Sanity Vol", strings.Repeat("x", 255), strings.Repeat("x", 256), strings.Repeat("x", 300),
		strings.Repeat("x", 299) + "y"} {
		got := csidriver.VolumeName(name)
		if len(got) > 255 || got != csidriver.VolumeName(name) {
			t.Errorf("VolumeName(%q) = %q: too long or not stable", name, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("VolumeName(%q) = VolumeName(%q)", name, prev)
		}
		seen[got] = name
	}
}
