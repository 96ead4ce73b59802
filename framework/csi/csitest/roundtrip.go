package csitest

import (
	"bufio"
	"bytes"
	"cmp"
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
)

const mib = int64(1) << 20

// RoundTripOptions configure RunDataRoundTrip.
type RoundTripOptions struct {
	// Setup starts the cloud under test with hv as the hypervisor of its
	// volumes (a simulator's Hypervisor option) and returns it. It runs
	// in the child process, in the private mount namespace (see
	// InMountNamespace), once per filesystem.
	Setup func(t testing.TB, hv *LoopHypervisor) RoundTripCloud
	// Filesystems are the filesystems the round trip runs on, each in a
	// subtest; nil is ext4 on 64 MiB and xfs on 320 MiB (xfs's minimum
	// is 300 MiB).
	Filesystems []RoundTripFilesystem
	// AbortedRetries is how often one call answered Aborted (the cloud
	// still working: csi.ErrPending) is retried, as the sidecars retry
	// it, before the test fails; 0 is 20, negative never.
	AbortedRetries int
	// WantAborted fails the test unless some call was answered Aborted:
	// for a cloud whose actions are asynchronous, to prove the retries
	// were exercised.
	WantAborted bool
	// LogVerbosity of the driver's log (through t.Log); 0 is 2 (failed
	// calls).
	LogVerbosity int
	// NoSnapshots is for a provider without snapshots: CreateSnapshot
	// must be Unimplemented, and the round trip leaves out the snapshot
	// and its restore (it repeats the first CreateVolume instead).
	NoSnapshots bool
	// SnapshotParameters are the snapshot's VolumeSnapshotClass
	// parameters (e.g. a cloud's switch to snapshot an attached volume).
	SnapshotParameters map[string]string
}

// RoundTripFilesystem is a filesystem the round trip runs on: its volumes
// are Size bytes, grown (restored, expanded) to Grown; a Grown of 0 is
// Size plus 32 MiB. Both should be in the provider's size steps.
type RoundTripFilesystem struct {
	Type        string
	Size, Grown int64
}

// RoundTripCloud is the cloud RoundTripOptions.Setup started.
type RoundTripCloud struct {
	// Provider talks to the cloud.
	Provider csi.Provider
	// Node is the node ID volumes are attached to; "" is FakeNode.
	Node string
	// Left lists what is left in the cloud, in the cloud's own view
	// (volumes, snapshots): it must be nothing at the end. Required.
	Left func() []string
	// Published, when not nil, checks more of a volume the round trip
	// just created, attached, staged and published under name: what the
	// provider promises beyond the common flow (its publish context, its
	// device links).
	Published func(t testing.TB, name, volumeID string, publishContext map[string]string)
}

// RunDataRoundTrip checks what csi-sanity does not, on real filesystems
// on loop devices, for each filesystem: it writes a file, snapshots the
// volume, restores the snapshot to a larger volume and reads the file back
// there (the filesystem grown to the device), repeats the restoring
// CreateVolume (the same volume; without snapshots, see NoSnapshots, the
// first CreateVolume), grows a volume while staged (online; an
// ext4 without CAP_SYS_RESOURCE at the next stage), writes and reads a
// raw block volume and grows it, and then finds nothing left behind: no
// volume or snapshot in the cloud, no loop device, no mount.
//
// Each filesystem runs in a child process in a private mount namespace
// (see InMountNamespace), where opts.Setup makes the cloud. A call
// answered Aborted is retried (see AbortedRetries) and counted, and so is
// a CreateSnapshot answered not ready to use (not counted). It skips
// (or fails, see RequireLoopDevices) where loop devices or the filesystem
// cannot be used.
func RunDataRoundTrip(t *testing.T, opts RoundTripOptions) {
	t.Helper()
	filesystems := opts.Filesystems
	if len(filesystems) == 0 {
		filesystems = []RoundTripFilesystem{{Type: "ext4", Size: 64 * mib}, {Type: "xfs", Size: 320 * mib}}
	}
	for _, fs := range filesystems {
		t.Run(fs.Type, func(t *testing.T) {
			RequireFilesystem(t, fs.Type)
			InMountNamespace(t, func(t *testing.T, dir string) { roundTrip(t, opts, fs, dir) }, nil)
		})
	}
}

// roundTripEnv is one round trip's driver and what it has published.
type roundTripEnv struct {
	t       *testing.T
	opts    RoundTripOptions
	cloud   RoundTripCloud
	hv      *LoopHypervisor
	d       *Driver
	dir     string
	aborted int
	pcs     map[string]map[string]string
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

// retry calls f until it answers anything but Aborted (the cloud still
// working), as a sidecar or the kubelet retries; it counts the Aborted.
func retry[T any](e *roundTripEnv, what string, f func() (T, error)) T {
	e.t.Helper()
	limit := cmp.Or(e.opts.AbortedRetries, 20)
	for i := 0; ; i++ {
		out, err := f()
		if status.Code(err) != codes.Aborted {
			if err != nil {
				e.t.Fatalf("%s: %v", what, err)
			}
			return out
		}
		e.aborted++
		if i >= limit {
			e.t.Fatalf("%s: still Aborted after %d calls: %v", what, i+1, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *roundTripEnv) node() string { return cmp.Or(e.cloud.Node, FakeNode) }

func (e *roundTripEnv) staging(id string) string { return filepath.Join(e.dir, "staging", id) }

func createRequest(name string, size int64, capability *csipb.VolumeCapability, snap string) *csipb.CreateVolumeRequest {
	req := &csipb.CreateVolumeRequest{Name: name, CapacityRange: &csipb.CapacityRange{RequiredBytes: size},
		VolumeCapabilities: []*csipb.VolumeCapability{capability}}
	if snap != "" {
		req.VolumeContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap}}}
	}
	return req
}

// create makes a volume (from a snapshot when snap != "") and attaches,
// stages and publishes it; it returns the volume ID and target path.
func (e *roundTripEnv) create(name string, size int64, capability *csipb.VolumeCapability, snap string) (string, string) {
	t, ctx := e.t, e.t.Context()
	vol := retry(e, "CreateVolume "+name, func() (*csipb.CreateVolumeResponse, error) {
		return e.d.Controller.CreateVolume(ctx, createRequest(name, size, capability, snap))
	})
	id := vol.GetVolume().GetVolumeId()
	if got := vol.GetVolume().GetCapacityBytes(); got != size {
		t.Errorf("CreateVolume %s: %d bytes, want %d", name, got, size)
	}
	pub := retry(e, "ControllerPublishVolume "+id, func() (*csipb.ControllerPublishVolumeResponse, error) {
		return e.d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
			VolumeId: id, NodeId: e.node(), VolumeCapability: capability})
	})
	e.pcs[id] = pub.GetPublishContext()
	dev := e.hv.Device(id)
	if dev == "" {
		t.Fatalf("volume %s has no loop device after ControllerPublishVolume", id)
	}
	if !hasLinkTo(t, e.hv.ByIDDir, dev) {
		t.Errorf("no link to %s (volume %s) in %s", dev, id, e.hv.ByIDDir)
	}
	e.stage(id, capability)
	target := filepath.Join(e.dir, name, "target")
	e.publish(id, target, capability)
	if e.cloud.Published != nil {
		e.cloud.Published(t, name, id, e.pcs[id])
	}
	return id, target
}

func (e *roundTripEnv) stage(id string, capability *csipb.VolumeCapability) {
	if _, err := e.d.Node.NodeStageVolume(e.t.Context(), &csipb.NodeStageVolumeRequest{VolumeId: id,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: e.pcs[id]}); err != nil {
		e.t.Fatalf("NodeStageVolume %s: %v", id, err)
	}
}

func (e *roundTripEnv) publish(id, target string, capability *csipb.VolumeCapability) {
	if _, err := e.d.Node.NodePublishVolume(e.t.Context(), &csipb.NodePublishVolumeRequest{VolumeId: id, TargetPath: target,
		StagingTargetPath: e.staging(id), VolumeCapability: capability, PublishContext: e.pcs[id]}); err != nil {
		e.t.Fatalf("NodePublishVolume %s: %v", id, err)
	}
}

func (e *roundTripEnv) unpublishUnstage(id, target string) {
	ctx := e.t.Context()
	if _, err := e.d.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		e.t.Errorf("NodeUnpublishVolume %s: %v", id, err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		e.t.Errorf("target %s still there after NodeUnpublishVolume: %v", target, err)
	}
	if _, err := e.d.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: e.staging(id)}); err != nil {
		e.t.Errorf("NodeUnstageVolume %s: %v", id, err)
	}
}

// remove unpublishes, unstages, detaches and deletes a volume.
func (e *roundTripEnv) remove(id, target string) {
	ctx := e.t.Context()
	e.unpublishUnstage(id, target)
	retry(e, "ControllerUnpublishVolume "+id, func() (*csipb.ControllerUnpublishVolumeResponse, error) {
		return e.d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: e.node()})
	})
	retry(e, "DeleteVolume "+id, func() (*csipb.DeleteVolumeResponse, error) {
		return e.d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id})
	})
}

func (e *roundTripEnv) totalBytes(id, path string) int64 {
	st, err := e.d.Node.NodeGetVolumeStats(e.t.Context(), &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: path})
	if err != nil {
		e.t.Fatalf("NodeGetVolumeStats %s: %v", path, err)
	}
	return st.GetUsage()[0].GetTotal()
}

func (e *roundTripEnv) expand(id string, size int64, capability *csipb.VolumeCapability) {
	got := retry(e, "ControllerExpandVolume "+id, func() (*csipb.ControllerExpandVolumeResponse, error) {
		return e.d.Controller.ControllerExpandVolume(e.t.Context(), &csipb.ControllerExpandVolumeRequest{VolumeId: id,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: size}, VolumeCapability: capability})
	})
	if got.GetCapacityBytes() != size {
		e.t.Errorf("ControllerExpandVolume %s: %d bytes, want %d", id, got.GetCapacityBytes(), size)
	}
}

func roundTrip(t *testing.T, opts RoundTripOptions, fs RoundTripFilesystem, dir string) {
	hv := NewLoopHypervisor(t)
	cloud := opts.Setup(t, hv)
	if cloud.Left == nil {
		t.Fatal("RoundTripCloud.Left is nil: the kit cannot check that nothing is left in the cloud")
	}
	e := &roundTripEnv{t: t, opts: opts, cloud: cloud, hv: hv, dir: dir, pcs: map[string]map[string]string{},
		d: StartDriver(t, csi.Options{Provider: cloud.Provider, ByIDDir: hv.ByIDDir}, opts.LogVerbosity)}
	ctx := t.Context()
	fsType, size, grown := fs.Type, fs.Size, cmp.Or(fs.Grown, fs.Size+32*mib)

	a, targetA := e.create("pvc-a", size, mountCap(fsType), "")
	want := []byte("written before the snapshot\n")
	if err := os.WriteFile(filepath.Join(targetA, "file"), want, 0o600); err != nil {
		t.Fatal(err)
	}
	var snapID, b, targetB string
	if opts.NoSnapshots {
		_, err := e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-a", SourceVolumeId: a})
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("CreateSnapshot of a driver without snapshots: %v, want Unimplemented", err)
		}
		// The CreateVolume retried: the same volume.
		again, err := e.d.Controller.CreateVolume(ctx, createRequest("pvc-a", size, mountCap(fsType), ""))
		if err != nil || again.GetVolume().GetVolumeId() != a {
			t.Errorf("CreateVolume pvc-a again: %v, %v; want volume %s", again, err, a)
		}
	} else {
		// Asked again while the cloud is still taking it, as
		// csi-snapshotter asks until it is ready to use.
		var snap *csipb.CreateSnapshotResponse
		for i := 0; ; i++ {
			snap = retry(e, "CreateSnapshot", func() (*csipb.CreateSnapshotResponse, error) {
				return e.d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snapshot-a", SourceVolumeId: a,
					Parameters: opts.SnapshotParameters})
			})
			if snap.GetSnapshot().GetReadyToUse() || i >= cmp.Or(opts.AbortedRetries, 20) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		snapID = snap.GetSnapshot().GetSnapshotId()
		if !snap.GetSnapshot().GetReadyToUse() || snap.GetSnapshot().GetSizeBytes() != size {
			t.Errorf("snapshot: %v, want ready and %d bytes", snap.GetSnapshot(), size)
		}

		// Restored to a larger volume: the file is there, the filesystem
		// fills the device (grown when staged).
		b, targetB = e.create("pvc-b", grown, mountCap(fsType), snapID)
		if got, err := os.ReadFile(filepath.Join(targetB, "file")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("restored file: %q, %v; want %q", got, err, want)
		}
		if total, orig := e.totalBytes(b, targetB), e.totalBytes(a, targetA); total <= orig {
			t.Errorf("restored volume's filesystem is %d bytes, not grown past the snapshot's %d", total, orig)
		}
		// The CreateVolume retried: the same volume, from the same snapshot.
		again, err := e.d.Controller.CreateVolume(ctx, createRequest("pvc-b", grown, mountCap(fsType), snapID))
		if err != nil || again.GetVolume().GetVolumeId() != b || again.GetVolume().GetContentSource().GetSnapshot().GetSnapshotId() != snapID {
			t.Errorf("CreateVolume pvc-b again: %v, %v; want volume %s from snapshot %s", again, err, b, snapID)
		}
	}

	// Expanded while staged: online growth (ext4 needs CAP_SYS_RESOURCE),
	// else at the next stage.
	before := e.totalBytes(a, targetA)
	e.expand(a, grown, mountCap(fsType))
	_, err := e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: a, VolumePath: targetA,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: grown}, VolumeCapability: mountCap(fsType)})
	switch online := fsType != "ext4" || hasCapSysResource(t); {
	case online && err != nil:
		t.Fatalf("NodeExpandVolume: %v", err)
	case !online:
		t.Logf("online ext4 growth without CAP_SYS_RESOURCE: %v (expected here); growing at the next stage", status.Convert(err).Message())
		if status.Code(err) != codes.Internal {
			t.Errorf("NodeExpandVolume without CAP_SYS_RESOURCE: %v, want Internal", err)
		}
		e.unpublishUnstage(a, targetA)
		e.stage(a, mountCap(fsType))
		e.publish(a, targetA, mountCap(fsType))
	}
	if after := e.totalBytes(a, targetA); after <= before {
		t.Errorf("after expansion the filesystem is %d bytes, was %d", after, before)
	}
	if got, err := os.ReadFile(filepath.Join(targetA, "file")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("file after growth: %q, %v", got, err)
	}

	// A raw block volume: bytes written through the published device
	// file are on the volume; it grows.
	c, targetC := e.create("pvc-c", size, blockCap(), "")
	if got := e.totalBytes(c, targetC); got != size {
		t.Errorf("block volume stats: %d bytes, want %d", got, size)
	}
	if err := writeAt(targetC, want, 4096); err != nil {
		t.Fatal(err)
	}
	if got, err := readAt(hv.Device(c), len(want), 4096); err != nil || !bytes.Equal(got, want) {
		t.Errorf("read from the loop device: %q, %v", got, err)
	}
	e.expand(c, grown, blockCap())
	if exp, err := e.d.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: c, VolumePath: targetC,
		VolumeCapability: blockCap()}); err != nil || exp.GetCapacityBytes() != grown {
		t.Errorf("NodeExpandVolume block: %v, %v; want %d bytes", exp, err, grown)
	}

	// Nothing left behind. The snapshot goes before its source volume, a
	// (a cloud may refuse to delete a volume that has snapshots, as
	// Cinder does: FailedPrecondition), after the volume restored from
	// it, b.
	for _, v := range []struct{ id, target string }{{b, targetB}, {c, targetC}} {
		if v.id != "" {
			e.remove(v.id, v.target)
		}
	}
	if snapID != "" {
		retry(e, "DeleteSnapshot "+snapID, func() (*csipb.DeleteSnapshotResponse, error) {
			return e.d.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snapID})
		})
	}
	e.remove(a, targetA)
	if left := cloud.Left(); len(left) != 0 {
		t.Errorf("left in the cloud: %v", left)
	}
	if n := hv.Attached(); n != 0 {
		t.Errorf("%d loop devices still attached", n)
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("still mounted: %v", m)
	}
	if opts.WantAborted && e.aborted == 0 {
		t.Error("no call was answered Aborted: the actions did not run asynchronously")
	}
	t.Logf("%d calls answered Aborted (an action in progress) and retried", e.aborted)
}

// hasLinkTo reports whether a link in byID points at dev.
func hasLinkTo(t testing.TB, byID, dev string) bool {
	entries, err := os.ReadDir(byID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join(byID, e.Name())); target == dev {
			return true
		}
	}
	return false
}

func writeAt(path string, data []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, off); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func readAt(path string, n int, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, n)
	_, err = f.ReadAt(buf, off)
	return buf, err
}

// hasCapSysResource reports whether this process may grow a mounted ext4
// filesystem (CapEff bit 24).
func hasCapSysResource(t testing.TB) bool {
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

// mountsUnder lists the mount points under dir.
func mountsUnder(t testing.TB, dir string) []string {
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
