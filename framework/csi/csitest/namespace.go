package csitest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childDirEnv tells the child process InMountNamespace starts that it is
// the child, and which directory it shares with its parent.
const childDirEnv = "CCMKIT_CSI_NAMESPACE_DIR"

// InMountNamespace runs body in a child process: this test binary,
// re-run for t alone in a private mount namespace (as `unshare -m
// --propagation private` does), so that whatever body mounts is the
// child's only and vanishes with it, even if it dies half-way. The
// parent then detaches any loop device body left whose backing file is
// under dir, and calls after (when not nil) with dir: body and after
// share it, to pass results back. The test fails when the child does.
//
// The test's code before and after InMountNamespace runs in both
// processes: make the cloud and the driver in body. It skips (or fails,
// see RequireLoopDevices) where loop devices cannot be used.
func InMountNamespace(t *testing.T, body func(t *testing.T, dir string), after func(dir string)) {
	t.Helper()
	RequireLoopDevices(t)
	if dir := os.Getenv(childDirEnv); dir != "" { //nolint:forbidigo // the kit's own parent-child protocol
		body(t, dir)
		return
	}
	dir := t.TempDir()
	args := []string{"-test.run=" + runPattern(t.Name()), "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v=true")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Truncate(time.Second).String())
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir) //nolint:forbidigo // the child gets this process's environment
	cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
	// Go makes / private in the new namespace (MS_REC|MS_PRIVATE), as
	// unshare(1) does, so that no mount propagates back to the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if cerr := detachLoopsUnder(dir); cerr != nil {
		t.Errorf("detaching the loop devices the child left: %v", cerr)
	}
	if err != nil {
		t.Fatalf("%s in a private mount namespace (its output is above): %v", t.Name(), err)
	}
	if after != nil {
		after(dir)
	}
}

// runPattern is the -test.run pattern that selects the test named name
// alone.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
