package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// nfsStandIn stands in for the NFS client of a host without one (this
// machine's kernel has none) under a real node plugin binary: a mount(8)
// first on the node plugin's PATH which, for `mount -t nfs ... <server>:<path>
// <target>`, bind-mounts the directory the test exported as server:path
// (export), as the NFS server would serve it, and passes any other mount
// to the real mount(8). Everything the driver does, up to and including
// running mount(8) with its NFS options, is real; what is not is
// mount.nfs, the kernel's NFS client and the protocol.
type nfsStandIn struct {
	dir     string // the stand-in mount(8), and the exports table
	mu      sync.Mutex
	exports map[string]string
}

func newNFSStandIn(t testing.TB) *nfsStandIn {
	t.Helper()
	real, err := exec.LookPath("mount")
	if err != nil {
		t.Fatalf("mount(8): %v", err)
	}
	n := &nfsStandIn{dir: t.TempDir(), exports: map[string]string{}}
	script := fmt.Sprintf(`#!/bin/sh
# mount(8) standing in for NFS (test/e2e/csi_nfs_test.go).
if [ "$1" = -t ] && { [ "$2" = nfs ] || [ "$2" = nfs4 ]; }; then
	shift 2
	if [ "$1" = -o ]; then shift 2; fi
	dir=$(awk -v src="$1" '$1 == src { print $2; exit }' %[1]s/exports)
	if [ -z "$dir" ]; then
		echo "mount.nfs: access denied by server while mounting $1" >&2
		exit 32
	fi
	exec %[2]s --bind "$dir" "$2"
fi
exec %[2]s "$@"
`, n.dir, real)
	if err := os.WriteFile(filepath.Join(n.dir, "mount"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	n.write(t)
	return n
}

// export has source ("server:/path") served from dir.
func (n *nfsStandIn) export(t testing.TB, source, dir string) {
	t.Helper()
	n.mu.Lock()
	n.exports[source] = dir
	n.mu.Unlock()
	n.write(t)
}

func (n *nfsStandIn) write(t testing.TB) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for src, dir := range n.exports {
		fmt.Fprintf(&b, "%s %s\n", src, dir)
	}
	if err := os.WriteFile(filepath.Join(n.dir, "exports"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// path is a PATH with the stand-in first.
func (n *nfsStandIn) path() string { return n.dir + ":" + os.Getenv("PATH") }
