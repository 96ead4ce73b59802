package csitest

import (
	"os"
	"path/filepath"
	"testing"
)

// CheckLink fails t unless the hypervisor's ByIDDir has a link called
// name: the by-id name the cloud gives an attached volume's device, where
// the provider's node side finds it (RoundTripCloud.Published checks it).
func (h *LoopHypervisor) CheckLink(t testing.TB, name string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(h.ByIDDir, name)); err != nil {
		t.Errorf("no device link %s", filepath.Join(h.ByIDDir, name))
	}
}
