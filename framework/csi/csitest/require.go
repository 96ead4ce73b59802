package csitest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// RequireLoopEnv, set to 1 (CI does), turns a skip for want of root,
// loop devices or the filesystem tools into a failure, so that the node
// tests never silently stop running.
const RequireLoopEnv = "CCMKIT_REQUIRE_LOOP"

// Tools the node side and the hypervisor run.
var loopTools = []string{"losetup", "mount", "umount", "blkid", "mkfs.ext4", "e2fsck", "resize2fs", "dumpe2fs", "cp"}

// RequireLoopDevices skips the test, saying why, unless this process can
// make loop devices, filesystems and mounts: Linux, root, /dev/loop-control
// and the tools (util-linux, e2fsprogs). With CCMKIT_REQUIRE_LOOP=1 it
// fails instead.
func RequireLoopDevices(t testing.TB) {
	t.Helper()
	if reason := loopUnavailable(); reason != "" {
		if os.Getenv(RequireLoopEnv) == "1" { //nolint:forbidigo // the test kit's own switch, not provider configuration
			t.Fatalf("%s=1 but loop devices cannot be used: %s", RequireLoopEnv, reason)
		}
		t.Skipf("needs loop devices: %s (set %s=1 to fail instead)", reason, RequireLoopEnv)
	}
}

func loopUnavailable() string {
	if runtime.GOOS != "linux" {
		return "not Linux"
	}
	if os.Geteuid() != 0 {
		return "not root"
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Sprintf("no /dev/loop-control (%v)", err)
	}
	var missing []string
	for _, tool := range loopTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		return "missing " + strings.Join(missing, ", ") + " (util-linux, e2fsprogs)"
	}
	return ""
}

// RequireFilesystem skips the test, saying why, unless mkfs.<fsType> is
// installed (xfsprogs for xfs); with CCMKIT_REQUIRE_LOOP=1 it fails
// instead.
func RequireFilesystem(t testing.TB, fsType string) {
	t.Helper()
	if _, err := exec.LookPath("mkfs." + fsType); err != nil {
		if os.Getenv(RequireLoopEnv) == "1" { //nolint:forbidigo // the test kit's own switch, not provider configuration
			t.Fatalf("%s=1 but there is no mkfs.%s", RequireLoopEnv, fsType)
		}
		t.Skipf("no mkfs.%s (set %s=1 to fail instead)", fsType, RequireLoopEnv)
	}
}
