package tritonsim

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/joyent/triton-go/compute"
)

// TestNFSExports: a ready volume's filesystem_path resolves to its export
// directory, under Options.NFSExportDir; what is written there stays
// while the volume does, and goes with it.
func TestNFSExports(t *testing.T) {
	root := t.TempDir()
	s, c := setup(t, Options{ProvisioningReads: 1, NFSExportDir: root})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "files"})
	if _, ok := s.VolumeExportDir(v.ID); ok {
		t.Fatal("a creating volume has an export")
	}
	got := getVolume(t, c, v.ID)
	dir, err := s.NFSExport(got.FileSystemPath)
	if err != nil {
		t.Fatal(err)
	}
	if byID, ok := s.VolumeExportDir(v.ID); !ok || byID != dir || dir != filepath.Join(root, v.ID) || s.NFSExportDir() != root {
		t.Fatalf("export %q, VolumeExportDir %q %v, root %q", dir, byID, ok, s.NFSExportDir())
	}
	if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello")); err != nil || string(b) != "hi" {
		t.Fatalf("read back %q, %v", b, err)
	}

	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted volume's data is still there: %v", err)
	}
	if _, err := s.NFSExport(got.FileSystemPath); !errors.Is(err, ErrNoNFSExport) {
		t.Fatalf("NFSExport of a deleted volume: %v", err)
	}
	if _, err := s.NFSExport("10.0.0.1:/nowhere"); !errors.Is(err, ErrNoNFSExport) {
		t.Fatalf("NFSExport of an unknown path: %v", err)
	}
}

// TestNFSExportsTemporary: without Options.NFSExportDir the exports are in
// a directory the Server makes on the first one, shared with the other
// account, and removes on Close.
func TestNFSExportsTemporary(t *testing.T) {
	s := New(Options{ProvisioningReads: -1})
	s.Start()
	defer s.Close()
	if s.NFSExportDir() != "" {
		t.Fatal("a directory was made before any export")
	}
	mine, err := s.AddVolume(Volume{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	root := s.NFSExportDir()
	if root == "" {
		t.Fatal("no exports' directory")
	}
	o := s.OtherAccountServer()
	theirs, err := o.AddVolume(Volume{Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Volume{mine, theirs} {
		if dir, err := s.NFSExport(v.FilesystemPath); err != nil || dir != filepath.Join(root, v.ID) {
			t.Fatalf("NFSExport(%s) = %q, %v", v.FilesystemPath, dir, err)
		}
	}
	s.Close()
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close left %s: %v", root, err)
	}
}
