package csitest_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

const mib = 1 << 20

// TestDataRoundTrip writes a file on a real filesystem, snapshots the
// volume, restores the snapshot to a larger volume and reads the file
// back there, and grows a volume: what csi-sanity does not check.
func TestDataRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		fsType string
		size   int64
	}{{"ext4", 64 * mib}, {"xfs", 320 * mib}} {
		t.Run(tc.fsType, func(t *testing.T) {
			csitest.RequireFilesystem(t, tc.fsType)
			csitest.InMountNamespace(t, func(t *testing.T, dir string) { roundTrip(t, dir, tc.fsType, tc.size) }, nil)
		})
	}
}

type volumeEnv struct {
	t   *testing.T
	d   *csitest.Driver
	dir string
}

func mountCap(fsType string) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: fsType}},
	}
}

func blockCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
	}
}

// create makes a volume (from a snapshot when snap != "") and attaches,
// stages and publishes it; it returns the volume ID and target path.
func (e *volumeEnv) create(name string, size int64, capability *csipb.VolumeCapability, snap string) (string, string) {
	t, ctx := e.t, e.t.Context()
	req := &csipb.CreateVolumeRequest{Name: name, CapacityRange: &csipb.CapacityRange{RequiredBytes: size},
		VolumeCapabilities: []*csipb.VolumeCapability{capability}}
	if snap != "" {
		req.VolumeContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap}}}
	}
	vol, err := e.d.Controller.CreateVolume(ctx, req)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", name, err)
	}
	id := vol.GetVolume().GetVolumeId()
	pub, err := e.d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
		VolumeId: id, NodeId: csitest.FakeNode, VolumeCapability: capability})
	if err != nil {
		t.Fatalf("ControllerPublishVolume %s: %v", id, err)
	}
	e.stage(id, capability, pub.GetPublishContext())
	target := filepath.Join(e.dir, name, "target")
	if _, err := e.d.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, TargetPath: target,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: pub.GetPublishContext()}); err != nil {
		t.Fatalf("NodePublishVolume %s: %v", id, err)
	}
	return id, target
}

func (e *volumeEnv) staging(id string) string { return filepath.Join(e.dir, "staging", id) }

func (e *volumeEnv) stage(id string, capability *csipb.VolumeCapability, pc map[string]string) {
	if _, err := e.d.Node.NodeStageVolume(e.t.Context(), &csipb.NodeStageVolumeRequest{VolumeId: id,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: pc}); err != nil {
		e.t.Fatalf("NodeStageVolume %s: %v", id, err)
	}
}

// remove unpublishes, unstages, detaches and deletes a volume.
func (e *volumeEnv) remove(id, target string) {
	t, ctx := e.t, e.t.Context()
	if _, err := e.d.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Errorf("NodeUnpublishVolume %s: %v", id, err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("target %s still there after NodeUnpublishVolume: %v", target, err)
	}
	if _, err := e.d.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: e.staging(id)}); err != nil {
		t.Errorf("NodeUnstageVolume %s: %v", id, err)
	}
	if _, err := e.d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: csitest.FakeNode}); err != nil {
		t.Errorf("ControllerUnpublishVolume %s: %v", id, err)
	}
	if _, err := e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Errorf("DeleteVolume %s: %v", id, err)
	}
}

func (e *volumeEnv) totalBytes(id, path string) int64 {
	st, err := e.d.Node.NodeGetVolumeStats(e.t.Context(), &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: path})
	if err != nil {
		e.t.Fatalf("NodeGetVolumeStats %s: %v", path, err)
	}
	return st.GetUsage()[0].GetTotal()
}

func roundTrip(t *testing.T, dir, fsType string, size int64) {
	hv := csitest.NewLoopHypervisor(t)
	cloud := csitest.NewFakeCloud(hv)
	e := &volumeEnv{t: t, d: csitest.StartDriver(t, csi.Options{Provider: cloud, ByIDDir: hv.ByIDDir}, 0), dir: dir}
	ctx := t.Context()
	grown := size + 32*mib

	a, targetA := e.create("a", size, mountCap(fsType), "")
	want := []byte("written before the snapshot\n")
	if err := os.WriteFile(filepath.Join(targetA, "file"), want, 0o600); err != nil {
		t.Fatal(err)
	}
	snap, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-a", SourceVolumeId: a})
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	snapID := snap.GetSnapshot().GetSnapshotId()

	// Restored to a larger volume: the file is there, the filesystem
	// fills the device (grown when staged).
	b, targetB := e.create("b", grown, mountCap(fsType), snapID)
	if got, err := os.ReadFile(filepath.Join(targetB, "file")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("restored file: %q, %v; want %q", got, err, want)
	}
	if total, orig := e.totalBytes(b, targetB), e.totalBytes(a, targetA); total <= orig {
		t.Errorf("restored volume's filesystem is %d bytes, not grown past the snapshot's %d", total, orig)
	}

	// Expanded while staged: online growth (ext4 needs CAP_SYS_RESOURCE),
	// else at the next stage.
	before := e.totalBytes(a, targetA)
	if _, err := e.d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: a,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapability: mountCap(fsType)}); err != nil {
		t.Fatalf("ControllerExpandVolume: %v", err)
	}
	_, err = e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: a, VolumePath: targetA,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapability: mountCap(fsType)})
	switch online := fsType != "ext4" || hasCapSysResource(t); {
	case online && err != nil:
		t.Fatalf("NodeExpandVolume: %v", err)
	case online:
		if after := e.totalBytes(a, targetA); after <= before {
			t.Errorf("after NodeExpandVolume the filesystem is %d bytes, was %d", after, before)
		}
	default:
		t.Logf("online ext4 growth without CAP_SYS_RESOURCE: %v (expected here); growing at the next stage", status.Convert(err).Message())
		if status.Code(err) != codes.Internal {
			t.Errorf("NodeExpandVolume without CAP_SYS_RESOURCE: %v, want Internal", err)
		}
		if _, err := e.d.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: a, TargetPath: targetA}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.d.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: a, StagingTargetPath: e.staging(a)}); err != nil {
			t.Fatal(err)
		}
		pc := map[string]string{csitest.FakeSerialKey: filepath.Base(mustReadlinkTarget(t, hv.ByIDDir, hv.Device(a)))}
		e.stage(a, mountCap(fsType), pc)
		if _, err := e.d.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: a, TargetPath: targetA,
			StagingTargetPath: e.staging(a), VolumeCapability: mountCap(fsType), PublishContext: pc}); err != nil {
			t.Fatal(err)
		}
		if after := e.totalBytes(a, targetA); after <= before {
			t.Errorf("after restaging the expanded volume the filesystem is %d bytes, was %d", after, before)
		}
		if got, err := os.ReadFile(filepath.Join(targetA, "file")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("file after growth: %q, %v", got, err)
		}
	}

	// A raw block volume: bytes written through the published device
	// file are on the volume; its size grows.
	c, targetC := e.create("c", size, blockCap(), "")
	if got := e.totalBytes(c, targetC); got != size {
		t.Errorf("block volume stats: %d bytes, want %d", got, size)
	}
	if err := writeAt(targetC, want, 4096); err != nil {
		t.Fatal(err)
	}
	if got, err := readAt(hv.Device(c), len(want), 4096); err != nil || !bytes.Equal(got, want) {
		t.Errorf("read from the loop device: %q, %v", got, err)
	}
	if _, err := e.d.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: c,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapability: blockCap()}); err != nil {
		t.Fatalf("ControllerExpandVolume block: %v", err)
	}
	if exp, err := e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: c, VolumePath: targetC,
		VolumeCapability: blockCap()}); err != nil || exp.GetCapacityBytes() != grown {
		t.Errorf("NodeExpandVolume block: %v, %v; want %d bytes", exp, err, grown)
	}

	for _, v := range []struct{ id, target string }{{a, targetA}, {b, targetB}, {c, targetC}} {
		e.remove(v.id, v.target)
	}
	if _, err := e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snapID}); err != nil {
		t.Errorf("DeleteSnapshot: %v", err)
	}
	if v, s := cloud.Volumes(), cloud.Snapshots(); len(v) != 0 || len(s) != 0 {
		t.Errorf("left in the cloud: volumes %v, snapshots %v", v, s)
	}
	if n := hv.Attached(); n != 0 {
		t.Errorf("%d loop devices still attached", n)
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("still mounted: %v", m)
	}
}

// mustReadlinkTarget finds the link in byID that points at dev.
func mustReadlinkTarget(t *testing.T, byID, dev string) string {
	entries, err := os.ReadDir(byID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join(byID, e.Name())); target == dev {
			return e.Name()
		}
	}
	t.Fatalf("no link to %s in %s", dev, byID)
	return ""
}

func writeAt(path string, data []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, off); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readAt(path string, n int, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	_, err = f.ReadAt(buf, off)
	return buf, err
}

// hasCapSysResource reports whether this process may grow a mounted ext4
// filesystem (CapEff bit 24).
func hasCapSysResource(t *testing.T) bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<24) != 0
		}
	}
	return false
}

func mountsUnder(t *testing.T, dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, f[4])
		}
	}
	return out
}
