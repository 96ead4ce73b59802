package digitalocean_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

const gib = int64(1) << 30

// TestCSIDataRoundTrip writes a file on a real filesystem on a dosim
// volume, snapshots it, restores the snapshot to a larger volume and reads
// the file back there, grows a volume, and writes through a raw block
// volume: through godo and dosim, on loop devices. dosim's actions take
// two reads to complete, so every attach, detach and resize is first
// answered Aborted and retried, as the sidecars do.
func TestCSIDataRoundTrip(t *testing.T) {
	for _, fsType := range []string{"ext4", "xfs"} {
		t.Run(fsType, func(t *testing.T) {
			csitest.RequireFilesystem(t, fsType)
			csitest.InMountNamespace(t, func(t *testing.T, dir string) { csiRoundTrip(t, dir, fsType) }, nil)
		})
	}
}

// retry calls f until it answers anything but Aborted (the cloud still
// working), as a sidecar or the kubelet retries; it counts the Aborted.
func retry[T any](t *testing.T, what string, aborted *int, f func() (T, error)) T {
	t.Helper()
	for i := 0; ; i++ {
		out, err := f()
		if status.Code(err) != codes.Aborted {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return out
		}
		*aborted++
		if i > 20 {
			t.Fatalf("%s: still Aborted after %d calls: %v", what, i, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type doVolumeEnv struct {
	t       *testing.T
	d       *csitest.Driver
	dir     string
	node    string
	aborted int
	pcs     map[string]map[string]string
}

func mountCapability(fsType string) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: fsType}},
	}
}

func blockCapability() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
	}
}

func (e *doVolumeEnv) staging(id string) string { return filepath.Join(e.dir, "staging", id) }

// create makes a volume (from a snapshot when snap != "") and attaches,
// stages and publishes it; it returns the volume ID and target path.
func (e *doVolumeEnv) create(name string, size int64, capability *csipb.VolumeCapability, snap string) (string, string) {
	t, ctx := e.t, e.t.Context()
	req := &csipb.CreateVolumeRequest{Name: name, CapacityRange: &csipb.CapacityRange{RequiredBytes: size},
		VolumeCapabilities: []*csipb.VolumeCapability{capability}}
	if snap != "" {
		req.VolumeContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap}}}
	}
	vol := retry(t, "CreateVolume "+name, &e.aborted, func() (*csipb.CreateVolumeResponse, error) {
		return e.d.Controller.CreateVolume(ctx, req)
	})
	id := vol.GetVolume().GetVolumeId()
	if got := vol.GetVolume().GetCapacityBytes(); got != size {
		t.Errorf("CreateVolume %s: %d bytes, want %d", name, got, size)
	}
	pub := retry(t, "ControllerPublishVolume "+id, &e.aborted, func() (*csipb.ControllerPublishVolumeResponse, error) {
		return e.d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
			VolumeId: id, NodeId: e.node, VolumeCapability: capability})
	})
	pc := pub.GetPublishContext()
	if pc[digitalocean.CSIDriverName+"/volume-name"] != name {
		t.Errorf("publish context %v, want the volume name %s", pc, name)
	}
	e.pcs[id] = pc
	e.stage(id, capability)
	target := filepath.Join(e.dir, name, "target")
	e.publish(id, target, capability)
	return id, target
}

func (e *doVolumeEnv) stage(id string, capability *csipb.VolumeCapability) {
	if _, err := e.d.Node.NodeStageVolume(e.t.Context(), &csipb.NodeStageVolumeRequest{VolumeId: id,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: e.pcs[id]}); err != nil {
		e.t.Fatalf("NodeStageVolume %s: %v", id, err)
	}
}

func (e *doVolumeEnv) publish(id, target string, capability *csipb.VolumeCapability) {
	if _, err := e.d.Node.NodePublishVolume(e.t.Context(), &csipb.NodePublishVolumeRequest{VolumeId: id, TargetPath: target,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: e.pcs[id]}); err != nil {
		e.t.Fatalf("NodePublishVolume %s: %v", id, err)
	}
}

func (e *doVolumeEnv) unpublishUnstage(id, target string) {
	ctx := e.t.Context()
	if _, err := e.d.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		e.t.Errorf("NodeUnpublishVolume %s: %v", id, err)
	}
	if _, err := e.d.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: e.staging(id)}); err != nil {
		e.t.Errorf("NodeUnstageVolume %s: %v", id, err)
	}
}

// remove unpublishes, unstages, detaches and deletes a volume.
func (e *doVolumeEnv) remove(id, target string) {
	t, ctx := e.t, e.t.Context()
	e.unpublishUnstage(id, target)
	retry(t, "ControllerUnpublishVolume "+id, &e.aborted, func() (*csipb.ControllerUnpublishVolumeResponse, error) {
		return e.d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: e.node})
	})
	retry(t, "DeleteVolume "+id, &e.aborted, func() (*csipb.DeleteVolumeResponse, error) {
		return e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id})
	})
}

func (e *doVolumeEnv) totalBytes(id, path string) int64 {
	st, err := e.d.Node.NodeGetVolumeStats(e.t.Context(), &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: path})
	if err != nil {
		e.t.Fatalf("NodeGetVolumeStats %s: %v", path, err)
	}
	return st.GetUsage()[0].GetTotal()
}

func (e *doVolumeEnv) expand(id string, size int64, capability *csipb.VolumeCapability) {
	got := retry(e.t, "ControllerExpandVolume "+id, &e.aborted, func() (*csipb.ControllerExpandVolumeResponse, error) {
		return e.d.Controller.ControllerExpandVolume(e.t.Context(), &csipb.ControllerExpandVolumeRequest{VolumeId: id,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: size}, VolumeCapability: capability})
	})
	if got.GetCapacityBytes() != size {
		e.t.Errorf("ControllerExpandVolume %s: %d bytes, want %d", id, got.GetCapacityBytes(), size)
	}
}

func csiRoundTrip(t *testing.T, dir, fsType string) {
	hv := csitest.NewLoopHypervisor(t)
	cloud := newCSICloud(t, dosim.Options{Hypervisor: hv, ProvisioningReads: 2})
	e := &doVolumeEnv{t: t, dir: dir, node: cloud.node(), pcs: map[string]map[string]string{},
		d: csitest.StartDriver(t, csi.Options{Provider: cloud.provider(nil), ByIDDir: hv.ByIDDir}, 0)}
	ctx := t.Context()
	size, grown := gib, 2*gib

	a, targetA := e.create("pvc-a", size, mountCapability(fsType), "")
	if dev := hv.Device(a); dev == "" {
		t.Fatalf("volume %s has no loop device after ControllerPublishVolume", a)
	}
	if link := filepath.Join(hv.ByIDDir, digitalocean.ByIDPrefix+"pvc-a"); !exists(link) {
		t.Errorf("no device link %s", link)
	}
	want := []byte("written before the snapshot\n")
	if err := os.WriteFile(filepath.Join(targetA, "file"), want, 0o600); err != nil {
		t.Fatal(err)
	}
	snap, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-a", SourceVolumeId: a})
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	snapID := snap.GetSnapshot().GetSnapshotId()
	if !snap.GetSnapshot().GetReadyToUse() || snap.GetSnapshot().GetSizeBytes() != size {
		t.Errorf("snapshot: %v, want ready and %d bytes", snap.GetSnapshot(), size)
	}

	// Restored to a larger volume: the file is there, the filesystem fills
	// the device (grown when staged).
	b, targetB := e.create("pvc-b", grown, mountCapability(fsType), snapID)
	if got, err := os.ReadFile(filepath.Join(targetB, "file")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("restored file: %q, %v; want %q", got, err, want)
	}
	if total, orig := e.totalBytes(b, targetB), e.totalBytes(a, targetA); total <= orig {
		t.Errorf("restored volume's filesystem is %d bytes, not grown past the snapshot's %d", total, orig)
	}
	// The CreateVolume retried: the same volume, from the same snapshot.
	again, err := e.d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-b",
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapabilities: []*csipb.VolumeCapability{mountCapability(fsType)},
		VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snapID}}}})
	if err != nil || again.GetVolume().GetVolumeId() != b || again.GetVolume().GetContentSource().GetSnapshot().GetSnapshotId() != snapID {
		t.Errorf("CreateVolume pvc-b again: %v, %v; want volume %s from snapshot %s", again, err, b, snapID)
	}

	// Expanded while staged: online growth (ext4 needs CAP_SYS_RESOURCE),
	// else at the next stage.
	before := e.totalBytes(a, targetA)
	e.expand(a, grown, mountCapability(fsType))
	_, err = e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: a, VolumePath: targetA,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapability: mountCapability(fsType)})
	switch online := fsType != "ext4" || hasCapSysResource(t); {
	case online && err != nil:
		t.Fatalf("NodeExpandVolume: %v", err)
	case !online:
		t.Logf("online ext4 growth without CAP_SYS_RESOURCE: %v (expected here); growing at the next stage", status.Convert(err).Message())
		e.unpublishUnstage(a, targetA)
		e.stage(a, mountCapability(fsType))
		e.publish(a, targetA, mountCapability(fsType))
	}
	if after := e.totalBytes(a, targetA); after <= before {
		t.Errorf("after expansion the filesystem is %d bytes, was %d", after, before)
	}
	if got, err := os.ReadFile(filepath.Join(targetA, "file")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("file after growth: %q, %v", got, err)
	}

	// A raw block volume: bytes written through the published device file
	// are on the volume; it grows.
	c, targetC := e.create("pvc-c", size, blockCapability(), "")
	if got := e.totalBytes(c, targetC); got != size {
		t.Errorf("block volume stats: %d bytes, want %d", got, size)
	}
	if err := writeAt(targetC, want, 4096); err != nil {
		t.Fatal(err)
	}
	if got, err := readAt(hv.Device(c), len(want), 4096); err != nil || !bytes.Equal(got, want) {
		t.Errorf("read from the loop device: %q, %v", got, err)
	}
	e.expand(c, grown, blockCapability())
	if exp, err := e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: c, VolumePath: targetC,
		VolumeCapability: blockCapability()}); err != nil || exp.GetCapacityBytes() != grown {
		t.Errorf("NodeExpandVolume block: %v, %v; want %d bytes", exp, err, grown)
	}

	for _, v := range []struct{ id, target string }{{a, targetA}, {b, targetB}, {c, targetC}} {
		e.remove(v.id, v.target)
	}
	if _, err := e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snapID}); err != nil {
		t.Errorf("DeleteSnapshot: %v", err)
	}
	st := cloud.sim.State()
	if len(st.Volumes) != 0 || len(st.Snapshots) != 0 {
		t.Errorf("left in the cloud: volumes %v, snapshots %v", st.Volumes, st.Snapshots)
	}
	if n := hv.Attached(); n != 0 {
		t.Errorf("%d loop devices still attached", n)
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("still mounted: %v", m)
	}
	if e.aborted == 0 {
		t.Error("no call was answered Aborted: the actions did not run asynchronously")
	}
	t.Logf("%d calls answered Aborted (an action in progress) and retried", e.aborted)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
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
