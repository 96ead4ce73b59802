package csidriver_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/digitalocean/godo"
	"google.golang.org/grpc/codes"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// controllerEnv is a driver serving the controller and node services (no
// node calls are made: no loop devices) against a dosim, logging at
// -v=10; the token must be in no log line and no error it recorded.
type controllerEnv struct {
	t     *testing.T
	cloud *csiCloud
	d     *csitest.LoggedDriver
}

func startController(t *testing.T, opts dosim.Options, extraEnv map[string]string) *controllerEnv {
	t.Helper()
	e := &controllerEnv{t: t, cloud: newCSICloud(t, opts)}
	e.d = csitest.StartLogged(t, e.cloud.provider(extraEnv), csiToken)
	return e
}

func (e *controllerEnv) createVolume(name string) string {
	e.t.Helper()
	vol, err := e.d.Controller.CreateVolume(e.t.Context(), &csipb.CreateVolumeRequest{Name: name,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: gib}, VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("ext4")}})
	if err != nil {
		e.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return vol.GetVolume().GetVolumeId()
}

// TestCSIBadInput: every invalid StorageClass parameter and size is
// answered with the spec's code and a message naming it, before any API
// call.
func TestCSIBadInput(t *testing.T) {
	e := startController(t, dosim.Options{ProvisioningReads: -1}, nil)
	e.d.CheckBadCreates(t, e.cloud.sim.Kit().Served, []csitest.BadCreate{
		{Name: "unknown parameter", Parameters: map[string]string{"type": "ssd"}, Want: codes.InvalidArgument, Naming: []string{"type", "unknown parameter"}},
		{Name: "fstype", Parameters: map[string]string{"fstype": "btrfs"}, Want: codes.InvalidArgument, Naming: []string{"fstype", "btrfs"}},
		{Name: "fstype in another case", Parameters: map[string]string{"FsType": "ntfs"}, Want: codes.InvalidArgument, Naming: []string{"FsType", "ntfs"}},
		{Name: "csi fstype", Parameters: map[string]string{"csi.storage.k8s.io/fstype": "zfs"}, Want: codes.InvalidArgument,
			Naming: []string{"csi.storage.k8s.io/fstype", "zfs"}},
		{Name: "unknown csi parameter", Parameters: map[string]string{"csi.storage.k8s.io/provisioner-secret-name": "x"}, Want: codes.InvalidArgument,
			Naming: []string{"csi.storage.k8s.io/provisioner-secret-name"}},
		{Name: "two bad", Parameters: map[string]string{"zone": "a", "fstype": "ext3", "csi.storage.k8s.io/pvc/name": "ok"}, Want: codes.InvalidArgument,
			Naming: []string{"zone", "fstype", "ext3"}},
		{Name: "larger than 16 TiB", CapacityRange: &csipb.CapacityRange{RequiredBytes: 17 << 40}, Want: codes.OutOfRange, Naming: []string{"capacity_range", "16384GiB"}},
		{Name: "limit below 1 GiB", CapacityRange: &csipb.CapacityRange{LimitBytes: 512 << 20}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
		{Name: "no GiB between required and limit", CapacityRange: &csipb.CapacityRange{RequiredBytes: gib + 1, LimitBytes: 2*gib - 1}, Want: codes.OutOfRange,
			Naming: []string{"capacity_range"}},
		{Name: "required above limit", CapacityRange: &csipb.CapacityRange{RequiredBytes: 3 * gib, LimitBytes: 2 * gib}, Want: codes.InvalidArgument,
			Naming: []string{"capacity_range", "limit_bytes"}},
		{Name: "negative", CapacityRange: &csipb.CapacityRange{RequiredBytes: -1}, Want: codes.InvalidArgument, Naming: []string{"capacity_range"}},
	})
	// The parameters external-provisioner passes on are taken.
	vol, err := e.d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-good", VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("xfs")},
		Parameters: map[string]string{"fstype": "xfs", "csi.storage.k8s.io/pvc/name": "data", "csi.storage.k8s.io/pvc/namespace": "default",
			"csi.storage.k8s.io/pv/name": "pvc-good"}})
	if err != nil {
		t.Fatalf("CreateVolume with the parameters external-provisioner passes: %v", err)
	}
	if got := vol.GetVolume().GetCapacityBytes(); got != 16*gib {
		t.Errorf("a volume with no capacity asked for: %d bytes, want 16 GiB", got)
	}
	// A volume ID or node ID from elsewhere: NotFound, InvalidArgument.
	if _, err := e.d.Publish("../../account", e.cloud.node()); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume of a volume ID with a path: %v, want NotFound", err)
	}
	if _, err := e.d.Publish(vol.GetVolume().GetVolumeId(), "node-1"); e.d.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "droplet ID") {
		t.Errorf("ControllerPublishVolume to a node ID that is not a droplet ID: %v, want InvalidArgument", err)
	}
}

// TestCSIAttach: a volume attached to another droplet is
// FailedPrecondition, the droplet's attach limit ResourceExhausted, a
// droplet busy with another volume Aborted, a missing droplet NotFound;
// attaching it again where it is needs no write.
func TestCSIAttach(t *testing.T) {
	e := startController(t, dosim.Options{ProvisioningReads: -1, VolumesPerDroplet: 1}, nil)
	other := e.cloud.sim.AddDroplet(dosim.Droplet{Name: "node-2"})
	a, b := e.createVolume("pvc-a"), e.createVolume("pvc-b")
	pub, err := e.d.Publish(a, e.cloud.node())
	if err != nil {
		t.Fatalf("ControllerPublishVolume: %v", err)
	}
	if got := pub.GetPublishContext(); !maps.Equal(got, map[string]string{"dobs.csi.digitalocean.com/volume-name": "pvc-a"}) {
		t.Errorf("publish context %v", got)
	}
	writes := e.cloud.sim.Writes()
	if again, err := e.d.Publish(a, e.cloud.node()); err != nil || !maps.Equal(again.GetPublishContext(), pub.GetPublishContext()) {
		t.Errorf("ControllerPublishVolume again: %v, %v", again, err)
	}
	if w := e.cloud.sim.Writes() - writes; w != 0 {
		t.Errorf("publishing an attached volume again wrote %d times", w)
	}

	_, err = e.d.Publish(a, strconv.Itoa(other.ID))
	if e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), e.cloud.node()) {
		t.Errorf("ControllerPublishVolume to another droplet: %v, want FailedPrecondition naming droplet %s", err, e.cloud.node())
	}
	_, err = e.d.Publish(b, e.cloud.node())
	if e.d.Code(err) != codes.ResourceExhausted {
		t.Errorf("ControllerPublishVolume past the droplet's limit: %v, want ResourceExhausted", err)
	}
	_, err = e.d.Publish(b, "999999999")
	if e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume to a droplet that does not exist: %v, want NotFound", err)
	}
	if _, err := e.d.Publish(b, strconv.Itoa(other.ID)); err != nil {
		t.Errorf("ControllerPublishVolume to the other droplet: %v", err)
	}
	// Deleting an attached volume: FailedPrecondition.
	_, err = e.d.Controller.DeleteVolume(t.Context(), &csipb.DeleteVolumeRequest{VolumeId: a})
	if e.d.Code(err) != codes.FailedPrecondition {
		t.Errorf("DeleteVolume of an attached volume: %v, want FailedPrecondition", err)
	}
	// Unpublishing from a droplet it is not attached to, or from one
	// that does not exist: nothing to do.
	for _, n := range []string{strconv.Itoa(other.ID), "999999999"} {
		if _, err := e.d.Controller.ControllerUnpublishVolume(t.Context(), &csipb.ControllerUnpublishVolumeRequest{VolumeId: a, NodeId: n}); err != nil {
			t.Errorf("ControllerUnpublishVolume from %s: %v", n, err)
		}
	}
	if got := e.cloud.sim.Volumes()[0].DropletIDs; !slices.Equal(got, []int{e.cloud.droplet.ID}) {
		t.Errorf("volume a is attached to %v", got)
	}
}

// TestCSIAsyncActions: with the API's actions taking a while (dosim: two
// reads), attach, detach and resize are answered Aborted and never
// waited for; each retry reads the action it started (one GET), and the
// call succeeds once the action completed. Another volume's attach to
// the same droplet meanwhile is Aborted ("pending event").
func TestCSIAsyncActions(t *testing.T) {
	e := startController(t, dosim.Options{ProvisioningReads: 2}, nil)
	ctx := t.Context()
	a, b := e.createVolume("pvc-a"), e.createVolume("pvc-b")
	node := e.cloud.node()

	_, err := e.d.Publish(a, node)
	if e.d.Code(err) != codes.Aborted {
		t.Fatalf("ControllerPublishVolume: %v, want Aborted while the attach runs", err)
	}
	if _, err := e.d.Publish(b, node); e.d.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "pending event") {
		t.Errorf("ControllerPublishVolume of another volume meanwhile: %v, want Aborted (pending event)", err)
	}
	before := e.cloud.sim.Stats()
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerPublishVolume retried: %v, want Aborted (the action's first read)", err)
	}
	if _, err := e.d.Publish(a, node); err != nil {
		t.Errorf("ControllerPublishVolume retried again: %v, want success", err)
	}
	if got := csitest.DiffStats(before, e.cloud.sim.Stats()); !maps.Equal(got, map[string]int{
		"GET /v2/volumes/{id}/actions/{action}": 2,
	}) {
		t.Errorf("the retries called %v; want one GET of the action each", got)
	}

	// Detach, and an attach while a detach runs: Aborted until it is
	// done, then attached again.
	unpublish := func() error {
		_, err := e.d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: a, NodeId: node})
		return err
	}
	if err := unpublish(); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerUnpublishVolume: %v, want Aborted while the detach runs", err)
	}
	if _, err := e.d.Publish(a, node); e.d.Code(err) != codes.Aborted {
		t.Errorf("ControllerPublishVolume while the detach runs: %v, want Aborted", err)
	}
	for i := 0; ; i++ {
		_, err := e.d.Publish(a, node)
		if err == nil {
			break
		}
		if e.d.Code(err) != codes.Aborted || i > 5 {
			t.Fatalf("ControllerPublishVolume after the detach: %v", err)
		}
	}
	if got := e.cloud.sim.Volumes()[0].DropletIDs; !slices.Equal(got, []int{e.cloud.droplet.ID}) {
		t.Errorf("volume a is attached to %v after detach then attach", got)
	}

	// Resize: Aborted, then the new size.
	expand := func() (*csipb.ControllerExpandVolumeResponse, error) {
		return e.d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: b,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 3 * gib}})
	}
	var got *csipb.ControllerExpandVolumeResponse
	for i := 0; ; i++ {
		if got, err = expand(); err == nil {
			break
		}
		if e.d.Code(err) != codes.Aborted || i > 5 {
			t.Fatalf("ControllerExpandVolume: %v", err)
		}
	}
	if got.GetCapacityBytes() != 3*gib || !got.GetNodeExpansionRequired() {
		t.Errorf("ControllerExpandVolume: %v, want 3 GiB and node expansion", got)
	}
	if size := e.cloud.sim.Volumes()[1].SizeGigabytes; size != 3 {
		t.Errorf("volume b is %d GiB, want 3", size)
	}
}

// TestCSICredentials: the token comes from DIGITALOCEAN_ACCESS_TOKEN, its
// _FILE or --token; a wrong one stops the driver with an error that names
// the setting, not the token; a node plugin needs none; a controller
// does.
func TestCSICredentials(t *testing.T) {
	cloud := newCSICloud(t, dosim.Options{})
	serve := func(mode csi.Mode, env map[string]string, args ...string) error {
		t.Helper()
		return csitest.ServeUntilListening(t, csitest.WithFlags(t, cloud.provider(env), args...), mode, csiToken)
	}
	if err := serve(csi.ModeController, nil); err != nil {
		t.Errorf("controller with DIGITALOCEAN_ACCESS_TOKEN: %v", err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(csiToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve(csi.ModeController, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": "", "DIGITALOCEAN_ACCESS_TOKEN_FILE": file}); err != nil {
		t.Errorf("controller with DIGITALOCEAN_ACCESS_TOKEN_FILE: %v", err)
	}
	if err := serve(csi.ModeController, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": ""}, "--token", csiToken); err != nil {
		t.Errorf("controller with --token: %v", err)
	}
	const wrong = "dop_v1_wrong-token-never-print"
	err := serve(csi.ModeController, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": wrong})
	if err == nil || !strings.Contains(err.Error(), "rejected the token (check DIGITALOCEAN_ACCESS_TOKEN") || strings.Contains(err.Error(), wrong) {
		t.Errorf("controller with a wrong token: %v", err)
	}
	// --token wins over the environment.
	if err := serve(csi.ModeController, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": wrong}, "--token", csiToken); err != nil {
		t.Errorf("--token over a wrong DIGITALOCEAN_ACCESS_TOKEN: %v", err)
	}
	err = serve(csi.ModeController, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": ""})
	if err == nil || !strings.Contains(err.Error(), "DIGITALOCEAN_ACCESS_TOKEN: required") {
		t.Errorf("controller without a token: %v", err)
	}
	// A node plugin without a token (csi-digitalocean's DaemonSet), in
	// mode node or all.
	for _, mode := range []csi.Mode{csi.ModeNode, csi.ModeAll} {
		if err := serve(mode, map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": ""}); err != nil {
			t.Errorf("%s without a token: %v", mode, err)
		}
	}
	// A node plugin off a droplet: the error names the setting.
	err = serve(csi.ModeNode, map[string]string{"DIGITALOCEAN_METADATA_URL": cloud.sim.URL() + "/_sim/metadata/1"})
	if err == nil || !strings.Contains(err.Error(), "DIGITALOCEAN_METADATA_URL") {
		t.Errorf("node plugin without metadata: %v", err)
	}
	// Bad settings, each named.
	err = serve(csi.ModeController, map[string]string{"DO_VOLUME_LIMIT": "-1", "DIGITALOCEAN_API_URL": "ftp://x"}, "--do-tag", "bad tag")
	for _, want := range []string{"DO_VOLUME_LIMIT", "DIGITALOCEAN_API_URL", "DO_TAG"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad settings: %v, want %s named", err, want)
		}
	}
}

// TestCSIConfigFlags: csi-digitalocean's flags configure the driver and
// win over the environment.
func TestCSIConfigFlags(t *testing.T) {
	cloud := newCSICloud(t, dosim.Options{ProvisioningReads: -1})
	p := csitest.WithFlags(t, cloud.provider(map[string]string{"DO_VOLUME_LIMIT": "3", "DO_TAG": "env-tag"}),
		"--volume-limit", "5", "--do-tag", "k8s:cluster-1", "--region", "nyc3", "--default-volumes-page-size", "200", "--validate-attachment")
	d := csitest.StartDriver(t, csi.Options{Provider: p}, 0)
	info, err := d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil || info.GetMaxVolumesPerNode() != 5 || info.GetNodeId() != cloud.node() ||
		info.GetAccessibleTopology().GetSegments()["region"] != "nyc3" {
		t.Errorf("NodeGetInfo: %v, %v; want droplet %s, 5 volumes, region nyc3", info, err, cloud.node())
	}
	vol, err := d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-tagged",
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
	if err != nil {
		t.Fatal(err)
	}
	v := cloud.sim.Volumes()[0]
	if !slices.Equal(v.Tags, []string{"k8s:cluster-1"}) || v.Description != "Created by DigitalOcean CSI driver" || v.SizeGigabytes != 16 {
		t.Errorf("volume %+v: want the tag k8s:cluster-1, csi-digitalocean's description, 16 GiB", v)
	}
	// A volume without the tag gets it when attached, as csi-digitalocean
	// does.
	untagged, err := cloud.sim.AddVolume(dosim.Volume{Name: "by-hand"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{vol.GetVolume().GetVolumeId(), untagged.ID} {
		if _, err := d.Controller.ControllerPublishVolume(t.Context(), &csipb.ControllerPublishVolumeRequest{
			VolumeId: id, NodeId: cloud.node(), VolumeCapability: csitest.MountCapability("")}); err != nil {
			t.Errorf("ControllerPublishVolume %s: %v", id, err)
		}
	}
	if tags := cloud.sim.Volumes()[1].Tags; !slices.Equal(tags, []string{"k8s:cluster-1"}) {
		t.Errorf("the volume made by hand has tags %v after attach, want k8s:cluster-1", tags)
	}
}

// TestCSISnapshots: snapshots by name are idempotent; a droplet's
// snapshot is never deleted through the CSI driver, and is no volume
// snapshot to it.
func TestCSISnapshots(t *testing.T) {
	e := startController(t, dosim.Options{ProvisioningReads: -1}, nil)
	ctx := t.Context()
	a, b := e.createVolume("pvc-a"), e.createVolume("pvc-b")
	snap, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-1", SourceVolumeId: a})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-1", SourceVolumeId: a})
	if err != nil || again.GetSnapshot().GetSnapshotId() != snap.GetSnapshot().GetSnapshotId() {
		t.Errorf("CreateSnapshot again: %v, %v", again, err)
	}
	if _, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-1", SourceVolumeId: b}); e.d.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateSnapshot of another volume with the same name: %v, want AlreadyExists", err)
	}

	// A droplet snapshot, through godo.
	u, _ := url.Parse(e.cloud.sim.URL() + "/")
	c, err := godo.New(cloudapi.WithBearerToken(&http.Client{}, u.Host, func() (string, error) { return csiToken, nil }), godo.SetBaseURL(u.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.DropletActions.Snapshot(ctx, e.cloud.droplet.ID, "droplet-image"); err != nil {
		t.Fatal(err)
	}
	var dropletSnap string
	for _, s := range e.cloud.sim.State().Snapshots {
		if s.ResourceType == "droplet" {
			dropletSnap = s.ID
		}
	}
	if dropletSnap == "" {
		t.Fatal("no droplet snapshot")
	}
	if _, err := e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: dropletSnap}); err != nil {
		t.Errorf("DeleteSnapshot of a droplet's snapshot: %v, want success (no such volume snapshot)", err)
	}
	if !slices.ContainsFunc(e.cloud.sim.State().Snapshots, func(s dosim.SnapshotRecord) bool { return s.ID == dropletSnap }) {
		t.Error("DeleteSnapshot deleted a droplet's snapshot")
	}
	list, err := e.d.Controller.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{})
	if err != nil || len(list.GetEntries()) != 1 {
		t.Errorf("ListSnapshots: %v, %v; want the volume snapshot only", list, err)
	}
	if _, err := e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
		t.Errorf("DeleteSnapshot: %v", err)
	}
}

// TestCSIAPICallsPerLifecycle counts the API calls of 20 volumes' lifecycle
// (CreateVolume, ControllerPublishVolume, ControllerUnpublishVolume,
// DeleteVolume, each retried while Aborted as the sidecars do) from
// dosim's request counts: with actions that complete at once and with
// actions that take two reads. csi-digitalocean v4.16.0 makes, for the
// same lifecycle, 2 (create: list by name, create) + 3 + polls (attach:
// get volume, get droplet, attach, then GET the action every second until
// it completes) + 3 + polls (detach, the same) + 1 (delete): 9 plus at
// least one poll per action, 11 or more (13 with actions that complete
// on their second read).
func TestCSIAPICallsPerLifecycle(t *testing.T) {
	const volumes = 20
	for _, tc := range []struct {
		name  string
		reads int
	}{{"actions complete at once", -1}, {"actions complete on their second read", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startController(t, dosim.Options{ProvisioningReads: tc.reads}, nil)
			e.d.Lifecycle(t, volumes, e.cloud.node(), func(i int) *csipb.CreateVolumeRequest {
				return &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), CapacityRange: &csipb.CapacityRange{RequiredBytes: gib},
					VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}}
			}, e.cloud.sim.Stats)
			t.Logf("csi-digitalocean: %d API calls per volume", map[int]int{-1: 11, 2: 13}[tc.reads])
			if len(e.cloud.sim.Volumes()) != 0 {
				t.Errorf("volumes left: %v", e.cloud.sim.Volumes())
			}
		})
	}
}

// TestCSIVolumeName: a CSI name the API takes is the volume's name (so
// csi-digitalocean's volumes and device paths are found); any other is
// made into one, the same every time, different for different names.
func TestCSIVolumeName(t *testing.T) {
	const pvc = "pvc-6f1f8a4e-7b0c-4c5e-9d5e-1b7b9e0c2d3f"
	if got := csidriver.VolumeName(pvc); got != pvc {
		t.Errorf("VolumeName(%s) = %s", pvc, got)
	}
	seen := map[string]string{}
	for _, name := range []string{"Sanity-Vol-ABC", "sanity-vol-abc-", "sanity-vol-ABC", "1volume", "vol+1", strings.Repeat("x", 128),
		strings.Repeat("x", 127) + "y", "snapshot/../../x", ""} {
		got := csidriver.VolumeName(name)
		if !regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`).MatchString(got) {
			t.Errorf("VolumeName(%q) = %q, not a DigitalOcean volume name", name, got)
		}
		if got != csidriver.VolumeName(name) {
			t.Errorf("VolumeName(%q) is not stable", name)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("VolumeName(%q) = VolumeName(%q) = %q", name, prev, got)
		}
		seen[got] = name
	}
}
