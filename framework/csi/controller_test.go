package csi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

const mib = int64(1) << 20

func start(t *testing.T, p csi.Provider) *csitest.Driver {
	t.Helper()
	return csitest.StartDriver(t, csi.Options{Provider: p, ByIDDir: t.TempDir()}, 0)
}

func mountCap(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}}}
}

var writer = mountCap(csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)

func createReq(name string, required int64) *csipb.CreateVolumeRequest {
	return &csipb.CreateVolumeRequest{Name: name, CapacityRange: &csipb.CapacityRange{RequiredBytes: required},
		VolumeCapabilities: []*csipb.VolumeCapability{writer}}
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: %v, want %s", what, err, want)
	}
}

func TestCreateVolumeIdempotentByName(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := start(t, cloud)
	ctx := t.Context()
	first, err := d.Controller.CreateVolume(ctx, createReq("pvc-1", 50*mib))
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Controller.CreateVolume(ctx, createReq("pvc-1", 50*mib))
	if err != nil {
		t.Fatal(err)
	}
	if first.GetVolume().GetVolumeId() != again.GetVolume().GetVolumeId() {
		t.Errorf("same name, two volumes: %s and %s", first.GetVolume().GetVolumeId(), again.GetVolume().GetVolumeId())
	}
	if got := first.GetVolume().GetCapacityBytes(); got != 64*mib {
		t.Errorf("50 MiB in 16 MiB steps: %d bytes, want 64 MiB", got)
	}
	_, err = d.Controller.CreateVolume(ctx, createReq("pvc-1", 128*mib))
	wantCode(t, "same name, larger size", err, codes.AlreadyExists)
	if vols := cloud.Volumes(); len(vols) != 1 {
		t.Errorf("cloud has %d volumes, want 1: %v", len(vols), vols)
	}
}

// Bad input gets the spec's code and a message naming what is wrong,
// and no cloud call at all.
func TestCreateVolumeRejectsBadInputWithoutCloudCalls(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := start(t, cloud)
	multi := mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	for _, tc := range []struct {
		name    string
		req     *csipb.CreateVolumeRequest
		code    codes.Code
		mention string
	}{
		{"no name", &csipb.CreateVolumeRequest{VolumeCapabilities: []*csipb.VolumeCapability{writer}}, codes.InvalidArgument, "name"},
		{"no capabilities", &csipb.CreateVolumeRequest{Name: "v"}, codes.InvalidArgument, "volume_capabilities"},
		{"multi-node", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{multi}}, codes.InvalidArgument, "MULTI_NODE_MULTI_WRITER"},
		{"unknown fs", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{{
			AccessMode: writer.GetAccessMode(), AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: "ntfs"}}}}},
			codes.InvalidArgument, "ntfs"},
		{"bad parameter value", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{writer},
			Parameters: map[string]string{"type": "platinum"}}, codes.InvalidArgument, "type"},
		{"unknown parameter", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{writer},
			Parameters: map[string]string{"iops": "9000"}}, codes.InvalidArgument, "iops"},
		{"too large", createReq("v", 5<<30), codes.OutOfRange, "4GiB"},
		{"clone", &csipb.CreateVolumeRequest{Name: "v", VolumeCapabilities: []*csipb.VolumeCapability{writer},
			VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{
				Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: "vol-1"}}}}, codes.InvalidArgument, "snapshot"},
	} {
		_, err := d.Controller.CreateVolume(t.Context(), tc.req)
		wantCode(t, tc.name, err, tc.code)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, tc.mention) {
			t.Errorf("%s: message %q does not mention %q", tc.name, msg, tc.mention)
		}
	}
	for _, op := range []string{"GetByName", "Create"} {
		if n := cloud.Calls(op); n != 0 {
			t.Errorf("%d %s calls for invalid requests", n, op)
		}
	}
}

func TestCreateVolumeTopology(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	cloud.Zones = []string{"zone-1", "zone-2", "zone-3"}
	d := start(t, cloud)
	topo := func(zones ...string) []*csipb.Topology {
		var out []*csipb.Topology
		for _, z := range zones {
			out = append(out, &csipb.Topology{Segments: map[string]string{csitest.FakeTopologyKey: z}})
		}
		return out
	}
	req := createReq("placed", 0)
	req.AccessibilityRequirements = &csipb.TopologyRequirement{Requisite: topo("zone-2", "zone-3"), Preferred: topo("zone-3")}
	vol, err := d.Controller.CreateVolume(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := vol.GetVolume().GetAccessibleTopology()
	if len(got) != 1 || got[0].GetSegments()[csitest.FakeTopologyKey] != "zone-3" {
		t.Errorf("accessible topology %v, want zone-3", got)
	}
	if v := cloud.Volumes(); len(v) != 1 || v[0].Segment != "zone-3" || v[0].SizeBytes != csitest.FakeLimits.DefaultBytes {
		t.Errorf("cloud volume %+v, want zone-3 and the default size", v)
	}
	// No requirement: the provider's default zone.
	vol, err = d.Controller.CreateVolume(t.Context(), createReq("anywhere", 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := vol.GetVolume().GetAccessibleTopology(); len(got) != 1 || got[0].GetSegments()[csitest.FakeTopologyKey] != "zone-1" {
		t.Errorf("accessible topology %v, want the default zone-1", got)
	}
}

func TestCreateVolumeFromSnapshot(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := start(t, cloud)
	ctx := t.Context()
	src, err := d.Controller.CreateVolume(ctx, createReq("src", 128*mib))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: src.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	restore := func(name, snapID string, required int64) (*csipb.CreateVolumeResponse, error) {
		req := createReq(name, required)
		req.VolumeContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snapID}}}
		return d.Controller.CreateVolume(ctx, req)
	}
	vol, err := restore("restored", snap.GetSnapshot().GetSnapshotId(), 16*mib)
	if err != nil {
		t.Fatal(err)
	}
	if vol.GetVolume().GetCapacityBytes() != 128*mib || vol.GetVolume().GetContentSource().GetSnapshot().GetSnapshotId() != snap.GetSnapshot().GetSnapshotId() {
		t.Errorf("restored volume %v: want the snapshot's 128 MiB and its content source", vol.GetVolume())
	}
	_, err = restore("missing", "snap-404", 0)
	wantCode(t, "unknown snapshot", err, codes.NotFound)
	_, err = d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: vol.GetVolume().GetVolumeId()})
	wantCode(t, "snapshot name taken by another volume's", err, codes.AlreadyExists)
	if n := len(cloud.Snapshots()); n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}

func TestControllerPublishErrors(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	cloud.Nodes = []string{"node-1", "node-2"}
	cloud.Limit = csitest.FakeLimits
	cloud.Limit.MaxPerNode = 1
	d := start(t, cloud)
	ctx := t.Context()
	mk := func(name string) string {
		v, err := d.Controller.CreateVolume(ctx, createReq(name, 0))
		if err != nil {
			t.Fatal(err)
		}
		return v.GetVolume().GetVolumeId()
	}
	publish := func(id, node string) error {
		_, err := d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: node, VolumeCapability: writer})
		return err
	}
	a, b := mk("a"), mk("b")
	if err := publish(a, "node-1"); err != nil {
		t.Fatal(err)
	}
	if err := publish(a, "node-1"); err != nil {
		t.Errorf("publishing again to the same node: %v", err)
	}
	wantCode(t, "attached to another node", publish(a, "node-2"), codes.FailedPrecondition)
	wantCode(t, "over the node's limit", publish(b, "node-1"), codes.ResourceExhausted)
	wantCode(t, "unknown node", publish(b, "node-9"), codes.NotFound)
	wantCode(t, "unknown volume", publish("vol-404", "node-1"), codes.NotFound)
	wantCode(t, "multi-node capability", func() error {
		_, err := d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: b, NodeId: "node-2",
			VolumeCapability: mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY)})
		return err
	}(), codes.InvalidArgument)

	_, err := d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: a})
	wantCode(t, "deleting an attached volume", err, codes.FailedPrecondition)
	// Unpublish from every node (no node_id), twice.
	for range 2 {
		if _, err := d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: a}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{a, a, b, "vol-404"} {
		if _, err := d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Errorf("DeleteVolume %s: %v", id, err)
		}
	}
	if _, err := d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: "vol-404", NodeId: "node-1"}); err != nil {
		t.Errorf("unpublishing a deleted volume: %v", err)
	}
	if v := cloud.Volumes(); len(v) != 0 {
		t.Errorf("volumes left: %v", v)
	}
}

// The cloud still working answers Aborted, at once; the retry succeeds.
func TestPendingIsAborted(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	cloud.PendingActions = 1
	d := start(t, cloud)
	ctx := t.Context()
	v, err := d.Controller.CreateVolume(ctx, createReq("v", 0))
	if err != nil {
		t.Fatal(err)
	}
	req := &csipb.ControllerPublishVolumeRequest{VolumeId: v.GetVolume().GetVolumeId(), NodeId: csitest.FakeNode, VolumeCapability: writer}
	_, err = d.Controller.ControllerPublishVolume(ctx, req)
	wantCode(t, "attach in progress", err, codes.Aborted)
	if _, err := d.Controller.ControllerPublishVolume(ctx, req); err != nil {
		t.Errorf("retry: %v", err)
	}
	if got := cloud.Volumes()[0].Nodes; len(got) != 1 || got[0] != csitest.FakeNode {
		t.Errorf("attached to %v", got)
	}
}

// blockingCloud holds Attach until release is closed.
type blockingCloud struct {
	*csitest.FakeCloud
	entered chan struct{}
	release chan struct{}
}

func (c *blockingCloud) Attach(ctx context.Context, id, node string) (map[string]string, error) {
	c.entered <- struct{}{}
	<-c.release
	return c.FakeCloud.Attach(ctx, id, node)
}

func TestOneOperationPerVolume(t *testing.T) {
	cloud := &blockingCloud{FakeCloud: csitest.NewFakeCloud(nil), entered: make(chan struct{}, 1), release: make(chan struct{})}
	d := start(t, cloud)
	ctx := t.Context()
	v, err := d.Controller.CreateVolume(ctx, createReq("v", 0))
	if err != nil {
		t.Fatal(err)
	}
	id := v.GetVolume().GetVolumeId()
	done := make(chan error)
	go func() {
		_, err := d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: csitest.FakeNode, VolumeCapability: writer})
		done <- err
	}()
	<-cloud.entered
	_, err = d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id})
	wantCode(t, "delete while an attach is in flight", err, codes.Aborted)
	_, err = d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csipb.CapacityRange{RequiredBytes: 128 * mib}})
	wantCode(t, "expand while an attach is in flight", err, codes.Aborted)
	if _, err := d.Controller.CreateVolume(ctx, createReq("other", 0)); err != nil {
		t.Errorf("another volume meanwhile: %v", err)
	}
	close(cloud.release)
	if err := <-done; err != nil {
		t.Fatalf("the attach: %v", err)
	}
	if _, err := d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csipb.CapacityRange{RequiredBytes: 128 * mib}}); err != nil {
		t.Errorf("expand afterwards: %v", err)
	}
	if got := cloud.Volumes()[0]; got.SizeBytes != 128*mib || len(got.Nodes) != 1 {
		t.Errorf("volume %+v, want 128 MiB and attached", got)
	}
}

func TestExpandVolume(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := start(t, cloud)
	ctx := t.Context()
	v, err := d.Controller.CreateVolume(ctx, createReq("v", 64*mib))
	if err != nil {
		t.Fatal(err)
	}
	id := v.GetVolume().GetVolumeId()
	expand := func(bytes int64, capability *csipb.VolumeCapability) (*csipb.ControllerExpandVolumeResponse, error) {
		return d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: id,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: bytes}, VolumeCapability: capability})
	}
	got, err := expand(100*mib, writer)
	if err != nil || got.GetCapacityBytes() != 112*mib || !got.GetNodeExpansionRequired() {
		t.Errorf("expand to 100 MiB: %v, %v; want 112 MiB and node expansion", got, err)
	}
	writes := cloud.Writes()
	block := &csipb.VolumeCapability{AccessMode: writer.GetAccessMode(), AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}}
	got, err = expand(100*mib, block)
	if err != nil || got.GetCapacityBytes() != 112*mib || got.GetNodeExpansionRequired() {
		t.Errorf("expand again, block: %v, %v; want 112 MiB and no node expansion", got, err)
	}
	if cloud.Writes() != writes {
		t.Errorf("expanding to the size it has made %d cloud writes", cloud.Writes()-writes)
	}
	_, err = expand(8<<30, writer)
	wantCode(t, "over the largest size", err, codes.OutOfRange)
	_, err = d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "vol-404", CapacityRange: &csipb.CapacityRange{RequiredBytes: mib}})
	wantCode(t, "unknown volume", err, codes.NotFound)
}

func TestListVolumesPages(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := start(t, cloud)
	ctx := t.Context()
	for i := range 5 {
		if _, err := d.Controller.CreateVolume(ctx, createReq(fmt.Sprintf("v%d", i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	token, pages := "", 0
	for {
		page, err := d.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{MaxEntries: 2, StartingToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.GetEntries()) > 2 {
			t.Errorf("page of %d entries, max 2", len(page.GetEntries()))
		}
		for _, e := range page.GetEntries() {
			seen[e.GetVolume().GetVolumeId()] = true
		}
		if token = page.GetNextToken(); token == "" {
			break
		}
	}
	if len(seen) != 5 || pages != 3 {
		t.Errorf("%d volumes in %d pages, want 5 in 3", len(seen), pages)
	}
	_, err := d.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{StartingToken: "bogus"})
	wantCode(t, "invalid token", err, codes.Aborted)
}

func TestValidateVolumeCapabilities(t *testing.T) {
	d := start(t, csitest.NewFakeCloud(nil))
	ctx := t.Context()
	v, err := d.Controller.CreateVolume(ctx, createReq("v", 0))
	if err != nil {
		t.Fatal(err)
	}
	id := v.GetVolume().GetVolumeId()
	ok, err := d.Controller.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: id, VolumeCapabilities: []*csipb.VolumeCapability{writer}})
	if err != nil || ok.GetConfirmed() == nil {
		t.Errorf("single-node writer: %v, %v; want confirmed", ok, err)
	}
	no, err := d.Controller.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: id,
		VolumeCapabilities: []*csipb.VolumeCapability{mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)}})
	if err != nil || no.GetConfirmed() != nil || no.GetMessage() == "" {
		t.Errorf("multi-node writer: %v, %v; want not confirmed, with a message", no, err)
	}
	_, err = d.Controller.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "vol-404", VolumeCapabilities: []*csipb.VolumeCapability{writer}})
	wantCode(t, "unknown volume", err, codes.NotFound)
}
