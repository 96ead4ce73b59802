package tritonsim

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/joyent/triton-go/compute"
)

// TestNFSExportBindMount stands in for a node's `mount -t nfs
// <filesystem_path> <target>` as a CSI test does: a bind mount of the
// export NFSExport resolves the path to. Two targets (two nodes) share
// the volume's data. It needs root (CAP_SYS_ADMIN); it is skipped without.
func TestNFSExportBindMount(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := getVolume(t, c, createVolume(t, c, compute.CreateVolumeInput{Name: "shared"}).ID)
	export, err := s.NFSExport(v.FileSystemPath)
	if err != nil {
		t.Fatal(err)
	}
	node1, node2 := t.TempDir(), t.TempDir()
	for _, target := range []string{node1, node2} {
		if err := syscall.Mount(export, target, "", syscall.MS_BIND, ""); err != nil {
			if errors.Is(err, syscall.EPERM) {
				t.Skipf("bind mount: %v (needs root)", err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(target, 0) })
	}
	if err := os.WriteFile(filepath.Join(node1, "written-on-node-1"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(node2, "written-on-node-1")); err != nil || string(b) != "hi" {
		t.Fatalf("node 2 reads %q, %v", b, err)
	}
}
