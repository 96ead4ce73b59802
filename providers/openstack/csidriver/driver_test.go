package csidriver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// Cinder's and Nova's endpoints, as openstacksim counts them.
const (
	opGetVolume    = "GET /volume/v3/{project}/volumes/{id}"
	opListVolumes  = "GET /volume/v3/{project}/volumes/detail"
	opVolumeAction = "POST /volume/v3/{project}/volumes/{id}/action"
	opAttach       = "POST /compute/v2.1/servers/{id}/os-volume_attachments"
)

// controllerEnv is a driver serving the controller and node services (no
// node call needs a device: no loop devices) against an openstacksim,
// logging at -v=10 (every API request, redacted); the password must be in
// no log line and no error it recorded.
type controllerEnv struct {
	t     *testing.T
	cloud *csiCloud
	d     *csitest.LoggedDriver
}

// startController starts the driver at a new openstacksim with opts, the
// simulator's cloud.conf plus extraConf and args; each API request is
// tried once, so that a fault is seen as it is.
func startController(t *testing.T, opts openstacksim.Options, extraConf string, args ...string) *controllerEnv {
	t.Helper()
	e := &controllerEnv{t: t, cloud: newCSICloud(t, opts)}
	e.d = csitest.StartLogged(t, csidriver.WithoutRetries(e.cloud.provider(t, extraConf, args...)), csiPassword)
	return e
}

func (e *controllerEnv) createVolume(name string, params map[string]string) *csipb.Volume {
	e.t.Helper()
	vol, err := e.d.Controller.CreateVolume(e.t.Context(), &csipb.CreateVolumeRequest{Name: name, Parameters: params,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: gib}, VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("ext4")}})
	if err != nil {
		e.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return vol.GetVolume()
}

// TestCSICreateVolume: a volume is named by the CSI name and carries
// cinder-csi-plugin's description and metadata (the cluster, the PVC and
// PV); its type and zone come from the StorageClass, else its zone from
// the topology; its topology is its Cinder zone, or with
// ignore-volume-az the zone asked for.
func TestCSICreateVolume(t *testing.T) {
	types := []openstacksim.VolumeType{{Name: "standard"}, {Name: "ssd"}}
	e := startController(t, openstacksim.Options{ProvisioningReads: -1, VolumeTypes: types, VolumeZones: []string{"nova", "az-2"}}, "")
	ctx := t.Context()
	vol := e.createVolume("pvc-1", map[string]string{"type": "ssd", "availability": "az-2", "csi.storage.k8s.io/pvc/name": "data",
		"csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-1", "fstype": "ext4"})
	v := e.cloud.volume(t, vol.GetVolumeId())
	wantMeta := map[string]string{"cinder.csi.openstack.org/cluster": csiCluster, "csi.storage.k8s.io/pvc/name": "data",
		"csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-1"}
	if v.Name != "pvc-1" || v.Size != 1 || v.VolumeType != "ssd" || v.AZ != "az-2" || v.Description != "Created by OpenStack Cinder CSI driver" ||
		!maps.Equal(v.Metadata, wantMeta) {
		t.Errorf("volume %+v", v)
	}
	if got := vol.GetAccessibleTopology(); len(got) != 1 || got[0].GetSegments()[csidriver.TopologyKey] != "az-2" {
		t.Errorf("topology %v, want the volume's zone az-2", got)
	}
	// The zone of the topology, when the StorageClass names none; a
	// second CreateVolume finds the volume by name.
	topo := &csipb.TopologyRequirement{Preferred: []*csipb.Topology{{Segments: map[string]string{csidriver.TopologyKey: "az-2"}}}}
	req := &csipb.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}, AccessibilityRequirements: topo}
	first, err := e.d.Controller.CreateVolume(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	writes := e.cloud.sim.Writes()
	again, err := e.d.Controller.CreateVolume(ctx, req)
	if err != nil || again.GetVolume().GetVolumeId() != first.GetVolume().GetVolumeId() || e.cloud.sim.Writes() != writes {
		t.Errorf("CreateVolume again: %v, %v (%d writes)", again, err, e.cloud.sim.Writes()-writes)
	}
	if v := e.cloud.volume(t, first.GetVolume().GetVolumeId()); v.AZ != "az-2" || v.VolumeType != "standard" || v.Size != 1 {
		t.Errorf("volume without parameters: %+v, want az-2, the default type, 1 GiB", v)
	}
	// A volume type or zone Cinder does not know: InvalidArgument naming it.
	for _, params := range []map[string]string{{"type": "gold"}, {"availability": "az-9"}} {
		_, err := e.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad", Parameters: params,
			VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
		for _, v := range params {
			if e.d.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), v) {
				t.Errorf("CreateVolume with %v: %v, want InvalidArgument naming it", params, err)
			}
		}
	}

	// With ignore-volume-az, the topology is the zone asked for.
	e2 := startController(t, openstacksim.Options{ProvisioningReads: -1, VolumeZones: []string{"storage"}}, "[BlockStorage]\nignore-volume-az = true\n")
	req.Name = "pvc-3"
	vol3, err := e2.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-3", Parameters: map[string]string{"availability": "storage"},
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}, AccessibilityRequirements: topo})
	if err != nil {
		t.Fatal(err)
	}
	if got := vol3.GetVolume().GetAccessibleTopology(); len(got) != 1 || got[0].GetSegments()[csidriver.TopologyKey] != "az-2" {
		t.Errorf("ignore-volume-az: topology %v, want the zone asked for, az-2", got)
	}
}

// TestCSIBadInput: every invalid StorageClass or VolumeSnapshotClass
// parameter is answered InvalidArgument naming it, before any API call.
func TestCSIBadInput(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1}, "")
	ctx := t.Context()
	vol := e.createVolume("pvc-a", nil)
	for _, tc := range []struct {
		name   string
		call   func() error
		naming []string
	}{
		{"unknown StorageClass parameter", func() error {
			_, err := e.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad", Parameters: map[string]string{"volumeType": "ssd"},
				VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
			return err
		}, []string{"volumeType: unknown parameter"}},
		{"filesystem", func() error {
			_, err := e.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad", Parameters: map[string]string{"fsType": "zfs"},
				VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
			return err
		}, []string{"fsType", "zfs"}},
		{"backup", func() error {
			_, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-bad", SourceVolumeId: vol.GetVolumeId(),
				Parameters: map[string]string{"type": "backup"}})
			return err
		}, []string{"type: backup is not supported"}},
		{"force-create", func() error {
			_, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-bad", SourceVolumeId: vol.GetVolumeId(),
				Parameters: map[string]string{"force-create": "always"}})
			return err
		}, []string{"force-create", "always"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requests := len(e.cloud.sim.Requests())
			e.d.CheckRefused(t, tc.call(), codes.InvalidArgument, tc.naming...)
			if r := len(e.cloud.sim.Requests()) - requests; r != 0 {
				t.Errorf("%d API requests; want none", r)
			}
		})
	}
}

// TestCSIAttach: the publish context is the device Nova gave the volume;
// publishing it again needs no write; a volume attached to another server
// is FailedPrecondition, a server with no room for another disk
// ResourceExhausted, a server or volume that does not exist NotFound; an
// attached volume cannot be deleted; unpublishing from a server it is not
// attached to, or that does not exist, is done.
func TestCSIAttach(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1, MaxDiskDevices: 2}, "[BlockStorage]\nnode-volume-attach-limit = 1\n")
	ctx := t.Context()
	other := e.cloud.sim.AddServer(openstacksim.NovaServer{Name: "node-2"})
	a, b := e.createVolume("pvc-a", nil).GetVolumeId(), e.createVolume("pvc-b", nil).GetVolumeId()
	pub, err := e.d.Publish(a, e.cloud.node())
	if err != nil {
		t.Fatalf("ControllerPublishVolume: %v", err)
	}
	if got := pub.GetPublishContext(); !maps.Equal(got, map[string]string{"DevicePath": "/dev/vdb"}) {
		t.Errorf("publish context %v, want Nova's device /dev/vdb", got)
	}
	writes := e.cloud.sim.Writes()
	if again, err := e.d.Publish(a, e.cloud.node()); err != nil || !maps.Equal(again.GetPublishContext(), pub.GetPublishContext()) {
		t.Errorf("ControllerPublishVolume again: %v, %v", again, err)
	}
	if w := e.cloud.sim.Writes() - writes; w != 0 {
		t.Errorf("publishing an attached volume again wrote %d times", w)
	}
	info, err := e.d.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
	if err != nil || info.GetMaxVolumesPerNode() != 1 || info.GetNodeId() != e.cloud.node() {
		t.Errorf("NodeGetInfo: %v, %v; want server %s and 1 volume", info, err, e.cloud.node())
	}

	if _, err := e.d.Publish(a, other.ID); e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), e.cloud.node()) {
		t.Errorf("ControllerPublishVolume to another server: %v, want FailedPrecondition naming server %s", err, e.cloud.node())
	}
	if _, err := e.d.Publish(b, e.cloud.node()); e.d.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "disk devices") {
		t.Errorf("ControllerPublishVolume past the server's disks: %v, want ResourceExhausted", err)
	}
	if _, err := e.d.Publish(b, "0d5c2b4a-1111-4222-8333-944455556666"); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume to a server that does not exist: %v, want NotFound", err)
	}
	if _, err := e.d.Publish("0d5c2b4a-1111-4222-8333-944455556666", e.cloud.node()); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume of a volume that does not exist: %v, want NotFound", err)
	}
	if _, err := e.d.Publish("../../os-quota-sets/x", e.cloud.node()); e.d.Code(err) != codes.NotFound {
		t.Errorf("ControllerPublishVolume of a volume ID with a path: %v, want NotFound", err)
	}
	if _, err := e.d.Publish(b, other.ID); err != nil {
		t.Errorf("ControllerPublishVolume to the other server: %v", err)
	}
	if _, err := e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: a}); e.d.Code(err) != codes.FailedPrecondition {
		t.Errorf("DeleteVolume of an attached volume: %v, want FailedPrecondition", err)
	}
	for _, n := range []string{other.ID, "0d5c2b4a-1111-4222-8333-944455556666"} {
		if err := e.d.Unpublish(a, n); err != nil {
			t.Errorf("ControllerUnpublishVolume from %s: %v", n, err)
		}
	}
	if got := e.cloud.volume(t, a).Attachments; len(got) != 1 || got[0].ServerID != e.cloud.node() {
		t.Errorf("volume a is attached to %v", got)
	}
	// Detached, then deleted.
	if err := e.d.Unpublish(a, e.cloud.node()); err != nil {
		t.Errorf("ControllerUnpublishVolume: %v", err)
	}
	if _, err := e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: a}); err != nil {
		t.Errorf("DeleteVolume: %v", err)
	}
	if got := len(e.cloud.sim.Volumes()); got != 1 {
		t.Errorf("%d volumes left, want b", got)
	}
}

// TestCSIPendingRetried: with Cinder and Nova taking a while (openstacksim:
// two reads per operation), create, attach, detach, expand, snapshot and
// delete are never waited for: each answers Aborted (or the snapshot not
// ready) while Cinder shows it under way, each retry reads the volume once,
// and the call succeeds once Cinder says it is done. The cloud is older
// than microversion 3.66, so an attached volume is snapshotted only with
// force-create.
func TestCSIPendingRetried(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: 2, CinderMinor: 65}, "")
	ctx := t.Context()
	node := e.cloud.node()
	a := e.createVolume("pvc-a", nil).GetVolumeId()
	if st := e.cloud.volume(t, a).Status; st != "creating" {
		t.Errorf("CreateVolume answered with the volume %s; want it answered while creating", st)
	}
	var pc map[string]string
	aborted, err := e.d.UntilDone(func() error {
		before := e.cloud.sim.Stats()
		pub, err := e.d.Publish(a, node)
		if status.Code(err) == codes.Aborted && !strings.Contains(err.Error(), "attaching") {
			// A retry while Cinder shows the volume busy reads it once.
			if got := csitest.DiffStats(before, e.cloud.sim.Stats()); !maps.Equal(got, map[string]int{opGetVolume: 1}) {
				t.Errorf("a retry called %v; want one GET of the volume", got)
			}
		}
		pc = pub.GetPublishContext()
		return err
	})
	if err != nil || aborted < 2 || pc["DevicePath"] == "" {
		t.Errorf("ControllerPublishVolume: %v after %d Aborted, publish context %v; want success after creating and attaching", err, aborted, pc)
	}
	if v := e.cloud.volume(t, a); v.Status != "in-use" {
		t.Errorf("volume is %s after attach", v.Status)
	}

	// Expanded while attached (microversion 3.42).
	var exp *csipb.ControllerExpandVolumeResponse
	aborted, err = e.d.UntilDone(func() error {
		var err error
		exp, err = e.d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: a,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 3 * gib}, VolumeCapability: csitest.MountCapability("ext4")})
		return err
	})
	if err != nil || aborted == 0 || exp.GetCapacityBytes() != 3*gib || !exp.GetNodeExpansionRequired() {
		t.Errorf("ControllerExpandVolume: %v, %v after %d Aborted; want 3 GiB and node expansion", exp, err, aborted)
	}
	if v := e.cloud.volume(t, a); v.Size != 3 || v.Status != "in-use" {
		t.Errorf("volume %d GiB %s after expand", v.Size, v.Status)
	}

	// A snapshot of the attached volume: refused without force-create,
	// naming it; taken with it, not ready until Cinder has it.
	_, err = e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-a", SourceVolumeId: a})
	if e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "force-create") {
		t.Errorf("CreateSnapshot of an attached volume without force-create: %v, want FailedPrecondition naming it", err)
	}
	params := map[string]string{"force-create": "true", "csi.storage.k8s.io/volumesnapshot/name": "snap",
		"csi.storage.k8s.io/volumesnapshot/namespace": "default", "csi.storage.k8s.io/volumesnapshotcontent/name": "snapcontent-1"}
	notReady := 0
	var snap *csipb.Snapshot
	for range 10 {
		s, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-a", SourceVolumeId: a, Parameters: params})
		if err != nil {
			t.Fatalf("CreateSnapshot: %v", err)
		}
		if snap = s.GetSnapshot(); snap.GetReadyToUse() {
			break
		}
		notReady++
	}
	if !snap.GetReadyToUse() || notReady == 0 || snap.GetSizeBytes() != 3*gib || snap.GetSourceVolumeId() != a {
		t.Errorf("snapshot %v after %d not ready; want ready, 3 GiB, of %s", snap, notReady, a)
	}
	snaps := e.cloud.sim.VolumeSnapshots()
	if len(snaps) != 1 || snaps[0].Name != "snap-a" || snaps[0].Metadata["cinder.csi.openstack.org/cluster"] != csiCluster ||
		snaps[0].Metadata["csi.storage.k8s.io/volumesnapshot/name"] != "snap" || snaps[0].Metadata["force-create"] != "" {
		t.Errorf("snapshots %+v", snaps)
	}

	// Detached: Aborted while detaching.
	aborted, err = e.d.UntilDone(func() error { return e.d.Unpublish(a, node) })
	if err != nil || aborted == 0 {
		t.Errorf("ControllerUnpublishVolume: %v after %d Aborted", err, aborted)
	}
	if v := e.cloud.volume(t, a); v.Status != "available" || len(v.Attachments) != 0 {
		t.Errorf("volume %s %v after detach", v.Status, v.Attachments)
	}
	// Deleted: FailedPrecondition while it has a snapshot, Aborted while
	// Cinder deletes.
	deleteVolume := func() error {
		_, err := e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: a})
		return err
	}
	if err := deleteVolume(); e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "snapshots") {
		t.Errorf("DeleteVolume of a volume with a snapshot: %v, want FailedPrecondition", err)
	}
	aborted, err = e.d.UntilDone(func() error {
		_, err := e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()})
		return err
	})
	if err != nil || aborted == 0 {
		t.Errorf("DeleteSnapshot: %v after %d Aborted", err, aborted)
	}
	aborted, err = e.d.UntilDone(deleteVolume)
	if err != nil || aborted == 0 || len(e.cloud.sim.Volumes()) != 0 || len(e.cloud.sim.VolumeSnapshots()) != 0 {
		t.Errorf("DeleteVolume: %v after %d Aborted; left %v %v", err, aborted, e.cloud.sim.Volumes(), e.cloud.sim.VolumeSnapshots())
	}
}

// TestCSIExpandWithoutMicroversion: with ignore-volume-microversion, an
// attached volume is not expanded (that takes microversion 3.42), as in
// cinder-csi-plugin: FailedPrecondition naming the setting; a detached one
// is, and lookups by name still work.
func TestCSIExpandWithoutMicroversion(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1}, "[BlockStorage]\nignore-volume-microversion = true\n")
	ctx := t.Context()
	a, b := e.createVolume("pvc-a", nil).GetVolumeId(), e.createVolume("pvc-b", nil).GetVolumeId()
	if again := e.createVolume("pvc-a", nil).GetVolumeId(); again != a {
		t.Errorf("CreateVolume again made %s, not %s", again, a)
	}
	if _, err := e.d.Publish(a, e.cloud.node()); err != nil {
		t.Fatal(err)
	}
	expand := func(id string) error {
		_, err := e.d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: id,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}})
		return err
	}
	if err := expand(a); e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "ignore-volume-microversion") {
		t.Errorf("ControllerExpandVolume of an attached volume: %v, want FailedPrecondition naming ignore-volume-microversion", err)
	}
	if err := expand(b); err != nil || e.cloud.volume(t, b).Size != 2 {
		t.Errorf("ControllerExpandVolume of a detached volume: %v, size %d", err, e.cloud.volume(t, b).Size)
	}
}

// TestCSINotFoundOnlyOn404: a failed or unanswered request, or a proxy's
// 404 page, is an error, never "not found": DeleteVolume and
// ControllerUnpublishVolume (where not found is success) fail instead.
// A malformed answer is an error, not a panic.
func TestCSINotFoundOnlyOn404(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1}, "")
	ctx := t.Context()
	a := e.createVolume("pvc-a", nil).GetVolumeId()
	deleteVolume := func() error {
		_, err := e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: a})
		return err
	}
	for _, tc := range []struct {
		name  string
		fault simkit.Fault
	}{
		{"500", simkit.Fault{Op: opGetVolume, Status: http.StatusInternalServerError}},
		{"401", simkit.Fault{Op: opGetVolume, Status: http.StatusUnauthorized}},
		{"proxy 404", simkit.Fault{Op: opGetVolume, Status: http.StatusNotFound, Body: "<html>Not Found</html>", ContentType: "text/html"}},
		{"reset", simkit.Fault{Op: opGetVolume, Reset: true}},
		{"truncated", simkit.Fault{Op: opGetVolume, Truncate: true}},
		{"size of another type", simkit.Fault{Op: opGetVolume, Mutate: setVolumeField("size", "1")}},
		{"no ID", simkit.Fault{Op: opGetVolume, Mutate: setVolumeField("id", nil)}},
		{"no status", simkit.Fault{Op: opGetVolume, Mutate: setVolumeField("status", "")}},
		{"attachment without a server", simkit.Fault{Op: opGetVolume, Mutate: setVolumeField("attachments", []any{map[string]any{"device": "/dev/vdb"}})}},
		{"no volume", simkit.Fault{Op: opGetVolume, Mutate: func(int, []byte) []byte { return []byte(`{"volume": null}`) }}},
		{"a list", simkit.Fault{Op: opGetVolume, Mutate: func(int, []byte) []byte { return []byte(`[]`) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove := e.cloud.sim.Inject(tc.fault)
			defer remove()
			if err := deleteVolume(); err == nil || e.d.Code(err) == codes.NotFound {
				t.Errorf("DeleteVolume: %v, want an error", err)
			}
			if err := e.d.Unpublish(a, e.cloud.node()); err == nil {
				t.Errorf("ControllerUnpublishVolume: no error")
			}
			if _, err := e.d.Controller.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: a}); err == nil || e.d.Code(err) == codes.NotFound {
				t.Errorf("ControllerGetVolume: %v, want an error", err)
			}
		})
	}
	// A malformed list: an error.
	remove := e.cloud.sim.Inject(simkit.Fault{Op: opListVolumes, Mutate: func(int, []byte) []byte { return []byte(`{"volumes": {"id": 1}}`) }})
	if _, err := e.d.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{}); err == nil {
		t.Errorf("ListVolumes of a malformed list: no error")
	}
	if _, err := e.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-b",
		VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}}); err == nil {
		t.Errorf("CreateVolume over a malformed lookup: no error")
	}
	remove()
	if len(e.cloud.sim.Volumes()) != 1 {
		t.Errorf("volumes: %v, want a only", e.cloud.sim.Volumes())
	}
	// Cinder's own 404: gone.
	if err := deleteVolume(); err != nil {
		t.Fatal(err)
	}
	if err := deleteVolume(); err != nil {
		t.Errorf("DeleteVolume of a volume that is gone: %v", err)
	}
}

// setVolumeField is a mutation of a volume answer that sets its key to
// value.
func setVolumeField(key string, value any) func(int, []byte) []byte {
	return func(_ int, body []byte) []byte {
		var answer map[string]map[string]any
		if err := json.Unmarshal(body, &answer); err != nil || answer["volume"] == nil {
			return body
		}
		answer["volume"][key] = value
		out, _ := json.Marshal(answer)
		return out
	}
}

// TestCSIAttachFaults: an attach Nova refuses because the server is busy
// (409) is Aborted and retried; one the API fails (500) is an error, and
// the volume stays detached.
func TestCSIAttachFaults(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1}, "")
	a := e.createVolume("pvc-a", nil).GetVolumeId()
	remove := e.cloud.sim.Inject(simkit.Fault{Op: opAttach, Status: http.StatusConflict, Count: 1,
		Message: "Cannot 'attach_volume' instance while it is in task_state powering-off"})
	aborted, err := e.d.UntilDone(func() error { _, err := e.d.Publish(a, e.cloud.node()); return err })
	remove()
	if err != nil || aborted != 1 {
		t.Errorf("ControllerPublishVolume: %v after %d Aborted, want success after 1", err, aborted)
	}
	if err := e.d.Unpublish(a, e.cloud.node()); err != nil {
		t.Fatal(err)
	}
	defer e.cloud.sim.Fail(http.StatusInternalServerError, opAttach)()
	if _, err := e.d.Publish(a, e.cloud.node()); e.d.Code(err) != codes.Internal {
		t.Errorf("ControllerPublishVolume with Nova failing: %v, want Internal", err)
	}
	if v := e.cloud.volume(t, a); v.Status != "available" {
		t.Errorf("volume %s", v.Status)
	}
}

// TestCSIListAndLookups: ListVolumes shows every volume with the servers
// it is attached to; snapshots list by volume; the controller's own
// process, serving the node too, reads the instance metadata lazily.
func TestCSIListAndLookups(t *testing.T) {
	e := startController(t, openstacksim.Options{ProvisioningReads: -1}, "")
	ctx := t.Context()
	a, b := e.createVolume("pvc-a", nil).GetVolumeId(), e.createVolume("pvc-b", nil).GetVolumeId()
	if _, err := e.d.Publish(a, e.cloud.node()); err != nil {
		t.Fatal(err)
	}
	list, err := e.d.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{})
	if err != nil || len(list.GetEntries()) != 2 {
		t.Fatalf("ListVolumes: %v, %v", list, err)
	}
	for _, entry := range list.GetEntries() {
		want := []string(nil)
		if entry.GetVolume().GetVolumeId() == a {
			want = []string{e.cloud.node()}
		}
		if got := entry.GetStatus().GetPublishedNodeIds(); !slices.Equal(got, want) {
			t.Errorf("volume %s published on %v, want %v", entry.GetVolume().GetVolumeId(), got, want)
		}
	}
	if _, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-b", SourceVolumeId: b}); err != nil {
		t.Fatal(err)
	}
	snaps, err := e.d.Controller.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{SourceVolumeId: b})
	if err != nil || len(snaps.GetEntries()) != 1 || snaps.GetEntries()[0].GetSnapshot().GetSourceVolumeId() != b {
		t.Errorf("ListSnapshots of b: %v, %v", snaps, err)
	}
	if snaps, err := e.d.Controller.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{SourceVolumeId: a}); err != nil || len(snaps.GetEntries()) != 0 {
		t.Errorf("ListSnapshots of a: %v, %v", snaps, err)
	}
	// A process serving both (cinder-csi-plugin's controller Deployment
	// serves the node too) that cannot read the instance metadata at
	// start-up serves anyway, and reads it when asked.
	drive := t.TempDir()
	p := csidriver.NewWithEnv(map[string]string{"OS_METADATA_URL": "http://127.0.0.1:1", "OS_CONFIG_DRIVE_DIR": drive})
	if err := csi.NewCommand(p, p.CommandOptions()...).ParseFlags([]string{"--cloud-config", e.cloud.cloudConf(t, "")}); err != nil {
		t.Fatal(err)
	}
	d := csitest.StartDriver(t, csi.Options{Provider: p}, 0)
	if _, err := d.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{}); err == nil || !strings.Contains(err.Error(), "OS_METADATA_URL") {
		t.Errorf("NodeGetInfo without the instance metadata: %v", err)
	}
	if err := e.cloud.sim.WriteConfigDrive(drive, e.cloud.node()); err != nil {
		t.Fatal(err)
	}
	if info, err := d.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{}); err != nil || info.GetNodeId() != e.cloud.node() {
		t.Errorf("NodeGetInfo once the config drive is there: %v, %v", info, err)
	}
}

// TestCSISnapshotInUse: a Cinder that serves microversion 3.66 snapshots
// an attached volume without force-create (the StorageClass default); an
// older one, or ignore-volume-microversion, refuses it naming
// force-create, and takes it with force-create: "true".
func TestCSISnapshotInUse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minor    int
		conf     string
		unforced bool // an attached volume is snapshotted without force-create
	}{
		{name: "3.70", unforced: true},
		{name: "3.66", minor: 66, unforced: true},
		{name: "3.60", minor: 60},
		{name: "ignore-volume-microversion", conf: "[BlockStorage]\nignore-volume-microversion = true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startController(t, openstacksim.Options{ProvisioningReads: -1, CinderMinor: tc.minor}, tc.conf)
			ctx := t.Context()
			a := e.createVolume("pvc-a", nil).GetVolumeId()
			if _, err := e.d.Publish(a, e.cloud.node()); err != nil {
				t.Fatal(err)
			}
			snapshot := func(name string, params map[string]string) error {
				_, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: name, SourceVolumeId: a, Parameters: params})
				return err
			}
			err := snapshot("unforced", map[string]string{"force-create": "false"})
			switch {
			case tc.unforced && err != nil:
				t.Errorf("CreateSnapshot of an attached volume, force-create false: %v", err)
			case !tc.unforced && (e.d.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "force-create")):
				t.Errorf("CreateSnapshot of an attached volume, force-create false: %v, want FailedPrecondition naming force-create", err)
			}
			if err := snapshot("forced", map[string]string{"force-create": "true"}); err != nil {
				t.Errorf("CreateSnapshot of an attached volume, force-create true: %v", err)
			}
			want := 1
			if tc.unforced {
				want = 2
			}
			if got := len(e.cloud.sim.VolumeSnapshots()); got != want {
				t.Errorf("the cloud holds %d snapshots, want %d", got, want)
			}
		})
	}
}

// TestCSIAPICallsPerLifecycle counts the API calls of 20 volumes'
// lifecycle (CreateVolume, ControllerPublishVolume,
// ControllerUnpublishVolume, DeleteVolume, each retried while Aborted as
// the sidecars do) from openstacksim's request counts: with Cinder and
// Nova done at once and with every operation settling on its second
// read. Nothing is left.
func TestCSIAPICallsPerLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads int
	}{{"done at once", -1}, {"done on the second read", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startController(t, openstacksim.Options{ProvisioningReads: tc.reads}, "")
			e.d.Lifecycle(t, 20, e.cloud.node(), func(i int) *csipb.CreateVolumeRequest {
				return &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}}
			}, e.cloud.sim.Stats)
			if left := e.cloud.sim.Volumes(); len(left) != 0 {
				t.Errorf("volumes left: %+v", left)
			}
		})
	}
}
