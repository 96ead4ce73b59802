package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinary builds the binary with a version stamped in, as a release
// would, and checks what an operator sees first.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	bin := filepath.Join(t.TempDir(), "custom-ccm")
	// Built as make build and the images build a CCM (static, -trimpath,
	// stripped), so the build reuses the packages they compiled: under
	// make test's race detector, CGO_ENABLED=1 is in the environment and
	// would compile the whole dependency tree once more for this build.
	build := exec.Command(goTool, "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/ccmkit/ccmkit/framework.version=v9.9.9-test",
		"-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("help", func(t *testing.T) {
		help := run(t, bin, "--help")
		for _, flag := range []string{
			"--kubeconfig", "--cloud-config", "--leader-elect", "--controllers",
			"--concurrent-node-syncs", "--configure-cloud-routes", "--cluster-cidr",
			"--secure-port", "--logging-format", "--cloud-api-qps", "--node-label",
		} {
			if !strings.Contains(help, flag+" ") {
				t.Errorf("--help does not list %s", flag)
			}
		}
		if line := lineWith(help, "All controllers:"); !strings.Contains(line, "node-labeler") {
			t.Errorf("--controllers help does not list node-labeler: %q", line)
		}
	})

	t.Run("version", func(t *testing.T) {
		if got := run(t, bin, "--version"); !strings.Contains(got, "v9.9.9-test") {
			t.Errorf("--version printed %q, want v9.9.9-test", got)
		}
	})
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func lineWith(text, substr string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return ""
}
