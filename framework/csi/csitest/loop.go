package csitest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// LoopHypervisor is the simkit.Hypervisor that makes a simulated cloud's
// volumes real block devices on this machine, as the cloud's hosts and
// udev do: each volume is a sparse file; attaching it sets up a loop
// device and links it under the volume's by-id name in ByIDDir (the
// driver's Options.ByIDDir), resizing grows the file (and the attached
// loop device, losetup -c), detaching removes the link and the loop
// device, a snapshot is a sparse copy. It needs root and loop devices
// (RequireLoopDevices); t.Cleanup unmounts and detaches whatever the test
// left.
type LoopHypervisor struct {
	// ByIDDir holds the device links: /dev/disk/by-id of the one host.
	ByIDDir string

	dir   string
	mu    sync.Mutex
	loops map[string]string // volume ID -> /dev/loopN
}

var _ simkit.Hypervisor = (*LoopHypervisor)(nil)

// NewLoopHypervisor returns a LoopHypervisor with its files under a
// temporary directory (in InMountNamespace's child, under the directory
// it shares with its parent, which detaches what a dead child left); it
// skips (or fails, see RequireLoopDevices) the test where loop devices
// cannot be used.
func NewLoopHypervisor(t testing.TB) *LoopHypervisor {
	t.Helper()
	RequireLoopDevices(t)
	dir := t.TempDir()
	if shared := os.Getenv(childDirEnv); shared != "" { //nolint:forbidigo // the kit's own parent-child protocol
		var err error
		if dir, err = os.MkdirTemp(shared, "hypervisor"); err != nil { //nolint:usetesting // under the parent's directory, which it cleans
			t.Fatal(err)
		}
	}
	return newLoopHypervisor(t, dir)
}

func newLoopHypervisor(t testing.TB, dir string) *LoopHypervisor {
	h := &LoopHypervisor{ByIDDir: filepath.Join(dir, "by-id"), dir: dir, loops: map[string]string{}}
	for _, d := range []string{h.ByIDDir, h.volumesDir(), h.snapshotsDir()} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("loop hypervisor cleanup: %v", err)
		}
	})
	return h
}

func (h *LoopHypervisor) volumesDir() string   { return filepath.Join(h.dir, "volumes") }
func (h *LoopHypervisor) snapshotsDir() string { return filepath.Join(h.dir, "snapshots") }

func (h *LoopHypervisor) volumeFile(id string) string {
	return filepath.Join(h.volumesDir(), fileName(id)+".img")
}

func (h *LoopHypervisor) snapshotFile(id string) string {
	return filepath.Join(h.snapshotsDir(), fileName(id)+".img")
}

func fileName(id string) string { return strings.NewReplacer("/", "_", "\x00", "_").Replace(id) }

// Create makes a volume's sparse file, empty or a copy of a snapshot's.
func (h *LoopHypervisor) Create(d simkit.Disk, snapshot string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	file := h.volumeFile(d.ID)
	if snapshot != "" {
		if err := run("cp", "--sparse=always", h.snapshotFile(snapshot), file); err != nil {
			return err
		}
	}
	return growFile(file, d.SizeBytes)
}

// Attach sets up a loop device on the volume's file and links it as
// ByIDDir/d.ByIDName.
func (h *LoopHypervisor) Attach(d simkit.Disk) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.loops[d.ID]; ok {
		return nil
	}
	out, err := output("losetup", "--find", "--show", h.volumeFile(d.ID))
	if err != nil {
		return err
	}
	dev := strings.TrimSpace(out)
	link := filepath.Join(h.ByIDDir, d.ByIDName)
	_ = os.Remove(link)
	if err := os.Symlink(dev, link); err != nil {
		_ = run("losetup", "--detach", dev)
		return err
	}
	h.loops[d.ID] = dev
	return nil
}

// Detach removes the link and the loop device (which the kernel frees
// once nothing has it mounted).
func (h *LoopHypervisor) Detach(d simkit.Disk) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.detach(d.ID, d.ByIDName)
}

func (h *LoopHypervisor) detach(id, byIDName string) error {
	dev, ok := h.loops[id]
	if !ok {
		return nil
	}
	if byIDName != "" {
		_ = os.Remove(filepath.Join(h.ByIDDir, byIDName))
	} else {
		removeLinksTo(h.ByIDDir, dev)
	}
	delete(h.loops, id)
	return run("losetup", "--detach", dev)
}

// Resize grows the volume's file, and its loop device when attached.
func (h *LoopHypervisor) Resize(d simkit.Disk) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := growFile(h.volumeFile(d.ID), d.SizeBytes); err != nil {
		return err
	}
	if dev, ok := h.loops[d.ID]; ok {
		return run("losetup", "--set-capacity", dev)
	}
	return nil
}

// Snapshot copies the volume's file, as its filesystems have written it
// (sync first: a crash-consistent snapshot, as a cloud's).
func (h *LoopHypervisor) Snapshot(d simkit.Disk, snapshot string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	unix.Sync()
	return run("cp", "--sparse=always", h.volumeFile(d.ID), h.snapshotFile(snapshot))
}

// DeleteSnapshot removes a snapshot's file.
func (h *LoopHypervisor) DeleteSnapshot(snapshot string) error {
	return removeFile(h.snapshotFile(snapshot))
}

// Delete detaches the volume if it is attached and removes its file.
func (h *LoopHypervisor) Delete(d simkit.Disk) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.detach(d.ID, d.ByIDName); err != nil {
		return err
	}
	return removeFile(h.volumeFile(d.ID))
}

// Device is the loop device of an attached volume, "" when detached.
func (h *LoopHypervisor) Device(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.loops[id]
}

// Attached is the number of volumes attached (loop devices set up).
func (h *LoopHypervisor) Attached() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.loops)
}

// Close unmounts what is still mounted from the loop devices (a test
// that failed half-way) and detaches them.
func (h *LoopHypervisor) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for id, dev := range h.loops {
		errs = append(errs, unmountDevice(dev), h.detach(id, ""))
	}
	return errors.Join(errs...)
}

// unmountDevice lazily unmounts every mount of dev in this mount
// namespace.
func unmountDevice(dev string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var targets []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// id parent major:minor root target options ... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 2 && g[1] == dev {
			targets = append(targets, unescapeMountPath(f[4]))
		}
	}
	var errs []error
	for i := len(targets) - 1; i >= 0; i-- { // the last mounted first
		if err := unix.Unmount(targets[i], unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", targets[i], err))
		}
	}
	return errors.Join(errs...)
}

func unescapeMountPath(p string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(p)
}

func removeLinksTo(dir, dev string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if target, err := os.Readlink(p); err == nil && target == dev {
			_ = os.Remove(p)
		}
	}
}

// detachLoopsUnder detaches every loop device whose backing file is
// under dir: what a child process that died left behind.
func detachLoopsUnder(dir string) error {
	out, err := output("losetup", "--list", "--noheadings", "--raw", "--output", "NAME,BACK-FILE")
	if err != nil {
		return err
	}
	var errs []error
	for line := range strings.Lines(out) {
		name, file, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && strings.HasPrefix(unescapeMountPath(file), dir+"/") {
			errs = append(errs, run("losetup", "--detach", name))
		}
	}
	return errors.Join(errs...)
}

func growFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() >= size {
		return nil
	}
	return f.Truncate(size)
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func run(name string, args ...string) error {
	_, err := output(name, args...)
	return err
}

func output(name string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
