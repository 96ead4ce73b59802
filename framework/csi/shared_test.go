package csi_test

import (
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

var (
	rwx = mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	rox = mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY)
)

func blockCap(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}}
}

// A shared filesystem's volumes take the multi-node access modes, in
// mount access only; whether one volume does is the provider's.
func TestSharedFilesystemAccessModes(t *testing.T) {
	shares := csitest.NewFakeShares(t.TempDir())
	d := start(t, shares)
	ctx := t.Context()

	multi, err := d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "rwx", VolumeCapabilities: []*csipb.VolumeCapability{rwx}})
	if err != nil {
		t.Fatalf("ReadWriteMany: %v", err)
	}
	if got := multi.GetVolume().GetVolumeContext()["export"]; got == "" {
		t.Errorf("volume_context %v: want the provider's Volume.Context", multi.GetVolume().GetVolumeContext())
	}
	_, err = d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "block",
		VolumeCapabilities: []*csipb.VolumeCapability{blockCap(csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)}})
	wantCode(t, "block access", err, codes.InvalidArgument)

	single := map[string]string{csitest.FakeSharesSingleNode: "true"}
	_, err = d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "single-rwx", Parameters: single,
		VolumeCapabilities: []*csipb.VolumeCapability{rwx}})
	wantCode(t, "ReadWriteMany of a single-node volume", err, codes.InvalidArgument)
	if vols, _ := shares.ListVolumes(ctx); len(vols) != 1 {
		t.Errorf("volumes after the refused ones: %d, want 1", len(vols))
	}

	one, err := d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "single", Parameters: single,
		VolumeCapabilities: []*csipb.VolumeCapability{writer}})
	if err != nil {
		t.Fatal(err)
	}
	// The same name, now asked for ReadWriteMany, is not the volume.
	_, err = d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "single", Parameters: single,
		VolumeCapabilities: []*csipb.VolumeCapability{rox}})
	wantCode(t, "a single-node volume's name asked for ReadOnlyMany", err, codes.AlreadyExists)

	for _, c := range []struct {
		id      string
		caps    *csipb.VolumeCapability
		confirm bool
	}{
		{multi.GetVolume().GetVolumeId(), rwx, true},
		{multi.GetVolume().GetVolumeId(), writer, true},
		{one.GetVolume().GetVolumeId(), writer, true},
		{one.GetVolume().GetVolumeId(), rox, false},
		{one.GetVolume().GetVolumeId(), blockCap(csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER), false},
	} {
		res, err := d.Controller.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{
			VolumeId: c.id, VolumeCapabilities: []*csipb.VolumeCapability{c.caps}})
		if err != nil || (res.GetConfirmed() != nil) != c.confirm {
			t.Errorf("ValidateVolumeCapabilities(%s, %v): %v, %v; want confirmed %v", c.id, c.caps, res, err, c.confirm)
		}
	}

	_, err = d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
		VolumeId: one.GetVolume().GetVolumeId(), NodeId: csitest.FakeNode, VolumeCapability: writer})
	wantCode(t, "ControllerPublishVolume", err, codes.Unimplemented)
	_, err = d.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{
		VolumeId: one.GetVolume().GetVolumeId(), StagingTargetPath: t.TempDir(), VolumeCapability: writer})
	wantCode(t, "NodeStageVolume", err, codes.Unimplemented)

	cc, err := d.Controller.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cc.GetCapabilities() {
		switch c.GetRpc().GetType() {
		case csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME, csipb.ControllerServiceCapability_RPC_LIST_VOLUMES_PUBLISHED_NODES:
			t.Errorf("a shared filesystem advertises %s", c.GetRpc().GetType())
		}
	}
	nc, err := d.Node.NodeGetCapabilities(ctx, &csipb.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range nc.GetCapabilities() {
		if c.GetRpc().GetType() == csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
			t.Error("a shared filesystem advertises STAGE_UNSTAGE_VOLUME")
		}
	}
}

// Serve refuses a provider that is neither an Attacher nor a
// SharedFilesystem.
func TestServeWantsOneKindOfProvider(t *testing.T) {
	neither := struct{ csi.Provider }{csitest.NewFakeCloud(nil)}
	err := csi.Serve(t.Context(), csi.Options{Provider: neither, Endpoint: "unix:///nonexistent/csi.sock"})
	if err == nil || !strings.Contains(err.Error(), "csi.Attacher") {
		t.Errorf("a provider of neither kind: %v, want an error naming csi.Attacher", err)
	}
}
