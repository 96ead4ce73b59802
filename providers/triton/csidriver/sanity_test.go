package csidriver_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/mount-utils"
	"k8s.io/utils/exec"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestCSISanity runs csi-sanity against the Triton CSI provider talking
// to tritonsim over HTTP with triton-go, in mount access mode (a shared
// filesystem has no block volumes): the controller creates and deletes
// RFD 26 volumes, and the node side is real up to the NFS mount, for
// which this kernel has no client: an NFSStandIn bind-mounts, in its
// place, the directory tritonsim keeps as the volume's export, found from
// the filesystem_path the volume_context carries. tritonsim settles at
// once (csi-sanity does not retry an Aborted); volumes are Triton's
// smallest, 10 GiB (directories: nothing is allocated).
func TestCSISanity(t *testing.T) {
	var sim *tritonsim.Server
	var standIn *csitest.NFSStandIn
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(t testing.TB, _ *csitest.LoopHypervisor) csi.Provider {
			c := newSimCloud(t, tritonsim.Options{ProvisioningReads: -1})
			sim = c.sim
			// The suite runs in a child process (RunSanity): check there,
			// once it is done, that the node mounted NFS as Triton does.
			t.Cleanup(func() { checkNFSMounts(t, standIn.Mounts()) })
			return c.provider(nil)
		},
		Mounter: func(_ testing.TB, m mount.Interface) mount.Interface {
			standIn = &csitest.NFSStandIn{Interface: m, Export: sim.NFSExport}
			return standIn
		},
		IDGen: tritonIDGen{},
	})
	csitest.CheckSanity(t, res, "mount")
}

// checkNFSMounts fails t unless there are NFS mounts and each is of a
// filesystem_path, type nfs, with vers=3 and sec=sys.
func checkNFSMounts(t testing.TB, mounts []csitest.NFSMount) {
	t.Helper()
	if len(mounts) == 0 {
		t.Error("no NFS mount went through the stand-in")
	}
	for _, m := range mounts {
		if m.FSType != "nfs" || !slices.Contains(m.Options, "vers=3") || !slices.Contains(m.Options, "sec=sys") {
			t.Errorf("NFS mount %+v: want type nfs, vers=3, sec=sys", m)
		}
	}
}

// TestCSISharedMount publishes one ReadWriteMany volume at two targets,
// as two Pods on two nodes use it, through the driver's node service on
// real mounts (the NFS mount stood in for by a bind mount of the
// volume's export directory): what one writes the other reads, and it is
// in the volume's export; a read-only publish cannot write; unpublished,
// nothing is mounted, and the deleted volume's data is gone.
func TestCSISharedMount(t *testing.T) {
	csitest.InMountNamespace(t, func(t *testing.T, dir string) {
		c := newSimCloud(t, tritonsim.Options{ProvisioningReads: -1})
		standIn := csitest.NewNFSStandIn(c.sim.NFSExport)
		d := csitest.StartDriver(t, csi.Options{Provider: c.provider(nil),
			Mounter: mount.NewSafeFormatAndMount(standIn, exec.New())}, 0)
		ctx := t.Context()
		resp, err := d.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-shared",
			VolumeCapabilities: []*csipb.VolumeCapability{multiNode()}})
		if err != nil {
			t.Fatalf("CreateVolume: %v", err)
		}
		vol := resp.GetVolume()
		publish := func(target string, ro bool) error {
			_, err := d.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target,
				VolumeCapability: multiNode(), VolumeContext: vol.GetVolumeContext(), Readonly: ro})
			return err
		}
		a, b, r := filepath.Join(dir, "pod-a"), filepath.Join(dir, "pod-b"), filepath.Join(dir, "pod-r")
		for _, p := range []struct {
			target string
			ro     bool
		}{{a, false}, {b, false}, {r, true}} {
			if err := publish(p.target, p.ro); err != nil {
				t.Fatalf("NodePublishVolume at %s: %v", p.target, err)
			}
		}
		checkNFSMounts(t, standIn.Mounts())
		if err := os.WriteFile(filepath.Join(a, "hello"), []byte("from a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		export, ok := c.sim.VolumeExportDir(vol.GetVolumeId())
		for _, p := range []string{filepath.Join(b, "hello"), filepath.Join(r, "hello"), filepath.Join(export, "hello")} {
			if got, err := os.ReadFile(p); err != nil || string(got) != "from a\n" || !ok {
				t.Errorf("%s: %q, %v; want what pod a wrote", p, got, err)
			}
		}
		if err := os.WriteFile(filepath.Join(r, "nope"), nil, 0o600); err == nil {
			t.Error("a read-only publish took a write")
		}
		for _, target := range []string{a, b, r} {
			if _, err := d.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target}); err != nil {
				t.Errorf("NodeUnpublishVolume %s: %v", target, err)
			}
			if mounted, _ := standIn.IsMountPoint(target); mounted {
				t.Errorf("%s is still mounted after NodeUnpublishVolume", target)
			}
		}
		if _, err := d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()}); err != nil {
			t.Fatalf("DeleteVolume: %v", err)
		}
		if _, err := os.Stat(export); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the deleted volume's export: %v; want gone", err)
		}
	}, nil)
}
