package main

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// imageLibDirs are the directories the dynamic loader of a Debian
// userland searches without an ld.so.cache.
func imageLibDirs(files map[string]file) []string {
	var dirs []string
	for n, f := range files {
		if f.hdr.Typeflag == tar.TypeDir && (path.Dir(n) == "lib" || path.Dir(n) == "usr/lib") && strings.Contains(path.Base(n), "-linux-") {
			dirs = append(dirs, n)
		}
	}
	slices.Sort(dirs)
	return append(dirs, "lib", "usr/lib")
}

// follow resolves symbolic links from n to a regular file of files.
func follow(files map[string]file, n string) (file, string, error) {
	for range 16 {
		f, ok := files[n]
		if !ok {
			return file{}, n, fmt.Errorf("no /%s", n)
		}
		if f.hdr.Typeflag != tar.TypeSymlink {
			return f, n, nil
		}
		if strings.HasPrefix(f.hdr.Linkname, "/") {
			n = cleanPath(f.hdr.Linkname)
		} else {
			n = cleanPath(path.Join(path.Dir(n), f.hdr.Linkname))
		}
	}
	return file{}, n, fmt.Errorf("/%s: too many links", n)
}

// checkTools checks CSI image name's node tools: every tool of its
// imageToolSets is on PATH and executable, a mount.<type> helper in /sbin
// too, where mount looks for it, and no tool of the sets it has not is
// there; /bin/sh is dash, /etc/mke2fs.conf is there, and so is every
// other file of its sets; and every ELF file of the image but the driver
// is for p and finds its interpreter and every library it needs in the
// image.
func checkTools(files map[string]file, name string, p v1.Platform) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	sets := imageToolSets(name)
	for _, s := range sets {
		for _, tool := range s.tools {
			i := slices.IndexFunc(toolDirs, func(d string) bool { _, ok := files[d+"/"+tool]; return ok })
			if i < 0 {
				fail("no %s on PATH", tool)
				continue
			}
			f, n, err := follow(files, toolDirs[i]+"/"+tool)
			if err != nil {
				fail("%s: %w", tool, err)
			} else if f.hdr.Typeflag != tar.TypeReg || f.hdr.Mode&0o111 != 0o111 {
				fail("%s: /%s is not an executable file (mode %o)", tool, n, f.hdr.Mode)
			}
			if _, ok := files["sbin/"+tool]; strings.HasPrefix(tool, "mount.") && !ok {
				fail("no /sbin/%s, where mount runs it from", tool)
			}
		}
		for _, n := range s.files {
			if f, _, err := follow(files, n); err != nil || len(f.data) == 0 {
				fail("no /%s (%v)", n, err)
			}
		}
	}
	for _, s := range toolSets() {
		if slices.ContainsFunc(sets, func(o toolSet) bool { return o.name == s.name }) {
			continue
		}
		for _, tool := range s.tools {
			for _, d := range toolDirs {
				if _, ok := files[d+"/"+tool]; ok {
					fail("has /%s/%s, of the %s, which %s does not run", d, tool, s.name, name)
				}
			}
		}
	}
	if _, n, err := follow(files, "bin/sh"); err != nil || n != "bin/dash" {
		fail("/bin/sh is /%s (%v), want /bin/dash", n, err)
	}
	if f, ok := files["etc/mke2fs.conf"]; !ok || !strings.Contains(string(f.data), "ext4 = {") {
		fail("no /etc/mke2fs.conf with ext4")
	}
	dirs := imageLibDirs(files)
	for n, f := range files {
		if f.hdr.Typeflag != tar.TypeReg || strings.HasSuffix(n, csiSuffix) {
			continue
		}
		if f.hdr.Uid != 0 || f.hdr.Gid != 0 || f.hdr.Mode&0o6000 != 0 {
			fail("/%s: owner %d:%d mode %o, want root's and no setuid", n, f.hdr.Uid, f.hdr.Gid, f.hdr.Mode)
		}
		interp, needed, err := elfDeps(f.data)
		if errors.Is(err, errNotELF) {
			continue
		}
		if err != nil {
			fail("/%s: %w", n, err)
			continue
		}
		if ef, err := elf.NewFile(strings.NewReader(string(f.data))); err == nil {
			if ef.Machine != elfMachine[p.Architecture] {
				fail("/%s is for %s, want %s", n, ef.Machine, p.Architecture)
			}
			ef.Close()
		}
		if interp != "" {
			if _, _, err := follow(files, cleanPath(interp)); err != nil {
				fail("/%s: interpreter %s: %w", n, interp, err)
			}
		}
		for _, so := range needed {
			if !slices.ContainsFunc(dirs, func(d string) bool { _, _, err := follow(files, d+"/"+so); return err == nil }) {
				fail("/%s needs %s, which is not in %v", n, so, dirs)
			}
		}
	}
	return errs
}

// checkDebianSBOM checks CSI image name's SBOM lists the Debian packages
// of its tools (the roots of its imageToolSets, and libc6) with a pkg:deb
// purl and the .deb's SHA-256.
func checkDebianSBOM(doc spdxDoc, name string) []error {
	var errs []error
	want := []string{"libc6"}
	for _, s := range imageToolSets(name) {
		want = append(want, s.roots...)
	}
	for _, pkg := range want {
		i := slices.IndexFunc(doc.Packages, func(p spdxPackage) bool { return p.Name == pkg })
		if i < 0 {
			errs = append(errs, fmt.Errorf("SBOM does not list the Debian package %s", pkg))
			continue
		}
		p := doc.Packages[i]
		if len(p.ExternalRefs) != 1 || !strings.HasPrefix(p.ExternalRefs[0].Locator, "pkg:deb/debian/"+pkg+"@") ||
			!strings.Contains(p.ExternalRefs[0].Locator, "?arch=") || len(p.Checksums) != 1 || len(p.Checksums[0].Value) != 64 {
			errs = append(errs, fmt.Errorf("SBOM package %s: refs %+v checksums %+v", pkg, p.ExternalRefs, p.Checksums))
		}
	}
	return errs
}

// TestCSIToolsRun runs the node tools of the host's CSI image in a chroot
// of its filesystem: the binaries, the libraries and the loader from the
// lock work together, and mkfs.ext4 formats a file that blkid then reads.
// It needs root (chroot); CCMKIT_REQUIRE_LOOP=1, as CI sets, makes that a
// failure rather than a skip.
func TestCSIToolsRun(t *testing.T) {
	requireRoot(t)
	const name = "digitalocean-csi-driver"
	o, _ := imageOptions(t, name)
	root := t.TempDir()
	if err := extract(hostImage(t, o, name), root); err != nil {
		t.Fatal(err)
	}
	disk, err := os.Create(filepath.Join(root, "tmp", "disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(disk.Truncate(64<<20), disk.Close()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mkfs.ext4", "-V"}, "mke2fs 1.47"},
		{[]string{"mkfs.xfs", "-V"}, "mkfs.xfs version"},
		{[]string{"blkid", "-V"}, "blkid from util-linux"},
		{[]string{"mount", "-V"}, "mount from util-linux"},
		{[]string{"mkfs.ext4", "-F", "-q", "-L", "ccmkit", "/tmp/disk.img"}, ""},
		{[]string{"blkid", "-o", "export", "/tmp/disk.img"}, "TYPE=ext4"},
		{[]string{"e2fsck", "-f", "-n", "/tmp/disk.img"}, "11/16384 files (0.0% non-contiguous)"},
		{[]string{"dumpe2fs", "-h", "/tmp/disk.img"}, "Filesystem volume name:   ccmkit"},
		{[]string{"fsck.xfs", "/tmp/disk.img"}, "xfs_repair(8)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := inChroot(t, root, nil, tc.args...)
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("printed %q, want %q in it", out, tc.want)
			}
		})
	}
}

// TestNFSClientRuns runs the NFS client of the host's Triton CSI image in
// a chroot of its filesystem, in a network namespace of its own with no
// network up (this kernel has no NFS client, and no NFS server is run):
// mount, as k8s.io/mount-utils runs it, finds /sbin/mount.nfs, which
// loads with its libraries, parses the driver's options and a named
// transport (/etc/netconfig, /etc/protocols) and gets as far as the
// server's rpcbind, unreachable; and without nolock it asks for the
// node's rpc.statd, which the image leaves to the node. Needs root, as
// TestCSIToolsRun.
func TestNFSClientRuns(t *testing.T) {
	requireRoot(t)
	const name = "triton-csi-driver"
	o, _ := imageOptions(t, name)
	root := t.TempDir()
	if err := extract(hostImage(t, o, name), root); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "tmp", "mnt"), 0o755); err != nil {
		t.Fatal(err)
	}
	// mount.nfs exits 32 (mount failure) when it cannot mount.
	netns := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	for _, tc := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"mount.nfs", "-V"}, 0, "mount.nfs: (linux nfs-utils 2."},
		{[]string{"mount", "-t", "nfs", "-o", "vers=3,sec=sys,nolock,proto=tcp,retry=0", "192.0.2.1:/export", "/tmp/mnt"}, 32,
			"mount.nfs: Network is unreachable"},
		{[]string{"mount", "-t", "nfs", "-o", "vers=3,sec=sys,retry=0", "192.0.2.1:/export", "/tmp/mnt"}, 32,
			"mount.nfs: rpc.statd is not running but is required for remote locking"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := inChroot(t, root, netns, tc.args...)
			var exit *exec.ExitError
			switch {
			case tc.exit == 0 && err != nil, tc.exit != 0 && (!errors.As(err, &exit) || exit.ExitCode() != tc.exit):
				t.Fatalf("%v, want exit status %d: %s", err, tc.exit, out)
			case !strings.Contains(string(out), tc.want):
				t.Errorf("printed %q, want %q in it", out, tc.want)
			}
		})
	}
}

// requireRoot skips t, or fails it under CCMKIT_REQUIRE_LOOP=1, when not
// root: chroot needs root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CCMKIT_REQUIRE_LOOP") == "1" {
			t.Fatal("CCMKIT_REQUIRE_LOOP=1 but not root: chroot needs root")
		}
		t.Skip("chroot needs root")
	}
}

// inChroot runs args in a chroot of root with the images' PATH, with
// attrs (namespaces) if not nil, and returns what it printed.
func inChroot(t *testing.T, root string, attrs *syscall.SysProcAttr, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...)
	cmd.Env = []string{toolsPath}
	cmd.SysProcAttr = attrs
	return cmd.CombinedOutput()
}

// extract writes the filesystem of img under dir.
func extract(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n := filepath.Join(dir, cleanPath(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(n, os.FileMode(h.Mode)&os.ModePerm|os.ModeSticky)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, n)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(n, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&os.ModePerm); err == nil {
				_, err = io.Copy(f, tr)
				err = errors.Join(err, f.Close())
			}
		default:
			err = fmt.Errorf("unexpected entry type %c", h.Typeflag)
		}
		if err != nil {
			return fmt.Errorf("/%s: %w", h.Name, err)
		}
	}
}
