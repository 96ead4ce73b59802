package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLockedPackages checks the lock covers amd64 and arm64 with the
// packages that ship every toolSets' tools, and that a .deb the mirror
// does not have, or has with other bytes, fails the build naming the lock
// update.
func TestLockedPackages(t *testing.T) {
	pkgs, err := readLock(filepath.Join(testOpts.Root, lockPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		want := []string{"libc6"}
		for _, s := range toolSets() {
			want = append(want, s.roots...)
		}
		for _, name := range want {
			if !slices.ContainsFunc(pkgs, func(d debPackage) bool { return d.Arch == arch && d.Name == name }) {
				t.Errorf("%s has no %s package %s", lockPath, arch, name)
			}
		}
	}
	i := slices.IndexFunc(pkgs, func(d debPackage) bool { return d.Name == "dash" })
	if i < 0 {
		t.Fatal("no dash in the lock")
	}
	changed, gone := pkgs[i], pkgs[i]
	changed.SHA256 = strings.Repeat("0", 64)
	gone.Filename = strings.Replace(gone.Filename, gone.Version, "0.0.0-0", 1)
	for name, p := range map[string]debPackage{"changed": changed, "gone": gone} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := fetchDeb(t.Context(), cache, p)
			if err == nil || !strings.Contains(err.Error(), "-update-debian-lock") {
				t.Errorf("fetchDeb gave %v, want an error that says to update the lock", err)
			}
			if left, _ := os.ReadDir(cache); len(left) > 0 {
				t.Errorf("the cache keeps %v", left)
			}
		})
	}
}
