package ranchersim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

// mountedAt reports whether /proc/self/mountinfo lists a mount at path.
func mountedAt(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}

// TestVolumePluginTwoHostsShareWrites: two hosts' plugins of rancher-nfs
// mount the same volume with real bind mounts of its directory on the
// shared export, and each host reads what the other writes; the last
// unmount on a host unmounts it there, and Rancher's removal of the
// volume leaves nothing on the share. It runs as root in a private mount
// namespace (csitest.InMountNamespace), so no mount outlives it; it
// skips elsewhere unless CCMKIT_REQUIRE_LOOP=1, which makes it fail.
func TestVolumePluginTwoHostsShareWrites(t *testing.T) {
	csitest.InMountNamespace(t, func(t *testing.T, _ string) {
		s, c := setup(t, Options{})
		s.AddStorageDriver(RancherNFS())
		export := t.TempDir()
		a := startPluginHost(t, s, "node-a", export, VolumePluginOptions{})
		b := startPluginHost(t, s, "node-b", export, VolumePluginOptions{})
		vol, err := c.Volume.Create(&rancher.Volume{Name: "shared", Driver: DriverRancherNFS})
		if err != nil {
			t.Fatal(err)
		}
		s.Advance()

		mounts := map[string]string{}
		for _, h := range []pluginHost{a, b} {
			h.conn.call("VolumeDriver.Create", map[string]any{"Name": "shared"}).ok(t, h.host.Hostname+" Create")
			m := h.conn.call("VolumeDriver.Mount", map[string]any{"Name": "shared", "ID": "pod-on-" + h.host.Hostname}).
				ok(t, h.host.Hostname+" Mount")
			mp, _ := m.body["Mountpoint"].(string)
			if mp != h.plugin.Mountpoint("shared") || !mountedAt(t, mp) {
				t.Fatalf("%s mounted the volume at %q (in the mount table: %v)", h.host.Hostname, mp, mountedAt(t, mp))
			}
			mounts[h.host.Hostname] = mp
		}
		if err := os.WriteFile(filepath.Join(mounts["node-a"], "from-a"), []byte("written on node-a"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(mounts["node-b"], "from-a")); err != nil || string(got) != "written on node-a" {
			t.Fatalf("node-b reads %q, %v", got, err)
		}
		if err := os.WriteFile(filepath.Join(mounts["node-b"], "from-b"), []byte("written on node-b"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(mounts["node-a"], "from-b")); err != nil || string(got) != "written on node-b" {
			t.Fatalf("node-a reads %q, %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(export, "shared", "from-b")); err != nil {
			t.Fatalf("the share does not hold the files: %v", err)
		}

		// A second caller on node-a keeps the mount until it, too, is gone.
		a.conn.call("VolumeDriver.Mount", map[string]any{"Name": "shared", "ID": "second-pod"}).ok(t, "second Mount")
		for _, id := range []string{"pod-on-node-a", "second-pod"} {
			if !mountedAt(t, mounts["node-a"]) {
				t.Fatalf("node-a unmounted the volume before its last caller (%s) was done", id)
			}
			a.conn.call("VolumeDriver.Unmount", map[string]any{"Name": "shared", "ID": id}).ok(t, "Unmount "+id)
		}
		b.conn.call("VolumeDriver.Unmount", map[string]any{"Name": "shared", "ID": "pod-on-node-b"}).ok(t, "node-b Unmount")
		for host, mp := range mounts {
			if mountedAt(t, mp) {
				t.Errorf("%s still has the volume mounted at %s", host, mp)
			}
			if _, err := os.Stat(mp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s's mountpoint %s is left: %v", host, mp, err)
			}
		}

		if !s.RemoveVolume(vol.Id) {
			t.Fatal("no volume to remove")
		}
		s.Advance()
		if _, err := os.Stat(filepath.Join(export, "shared")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the removed volume's data is still on the share: %v", err)
		}
	}, nil)
}
