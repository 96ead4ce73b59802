// Package cmdtest runs a command of this module the way an operator does:
// built with go build, in a clean environment, against a kubeconfig, for
// the tests of the commands (cmd/*/main_test.go, and tests that run a
// command's code in a child process). CheckCCM runs the checks every
// cloud's cloud-controller-manager binary must pass from a small table,
// and CheckCSI those of every cloud's CSI driver; ServeCSI serves a CSI
// driver binary on a socket for a test to call.
package cmdtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binaries are the commands Build has built in this process, by source
// directory. They live in dir, which Main removes at the end.
var binaries struct {
	mu     sync.Mutex
	cached bool   // Main runs the tests: keep binaries for the whole process
	dir    string // made by the first Build
	byDir  map[string]*binary
}

type binary struct {
	once sync.Once
	path string
	err  error
}

// Main runs the package's tests (m.Run) and exits with their status: call
// it from TestMain. Build then builds each command once for the whole
// process, however many tests ask for it, and Main removes the binaries
// at the end.
func Main(m *testing.M) {
	binaries.cached = true
	code := m.Run()
	if binaries.dir != "" {
		if err := os.RemoveAll(binaries.dir); err != nil {
			fmt.Fprintln(os.Stderr, "cmdtest:", err)
		}
	}
	os.Exit(code)
}

// Build builds the command in the current directory (a test's package
// directory: the command under test) as the images ship it, and returns
// the binary's path; it skips the test with -short. Under Main the binary
// is built once per process and shared by every test; without it, each
// call builds anew into the test's temp dir.
func Build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if !binaries.cached {
		path, err := goBuild(dir, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	b := cachedBinary(dir)
	b.once.Do(func() {
		var out string
		if out, b.err = buildDir(); b.err == nil {
			b.path, b.err = goBuild(dir, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func cachedBinary(dir string) *binary {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.byDir == nil {
		binaries.byDir = map[string]*binary{}
	}
	b := binaries.byDir[dir]
	if b == nil {
		b = &binary{}
		binaries.byDir[dir] = b
	}
	return b
}

// buildDir returns a new directory under the process's build directory,
// for one binary.
func buildDir() (string, error) {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "cmdtest-")
		if err != nil {
			return "", err
		}
		binaries.dir = dir
	}
	return os.MkdirTemp(binaries.dir, "")
}

// goBuild builds the command in dir into outDir, named after dir, with
// the flags internal/cluster.BuildCCM uses for the e2e suite and
// hack/images for the images: CGO_ENABLED=0 and -trimpath. The same flags
// make one set of compiled packages in the Go build cache serve all of
// these builds; other flags would compile the ~1,400 packages again.
func goBuild(dir, outDir string) (string, error) {
	bin := filepath.Join(outDir, filepath.Base(dir))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", dir, err, out)
	}
	return bin, nil
}

// Run runs bin with args in an environment of PATH, HOME (a new empty
// directory) and env ("KEY=value" each), nothing else, and returns its
// combined output and exit status.
func Run(t *testing.T, bin string, env []string, args ...string) (out string, exitCode int) {
	t.Helper()
	var b bytes.Buffer
	exitCode = run(t, bin, env, &b, &b, args)
	return b.String(), exitCode
}

// RunSplit is Run with the standard output and the standard error apart.
func RunSplit(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	var o, e bytes.Buffer
	exitCode = run(t, bin, env, &o, &e, args)
	return o.String(), e.String(), exitCode
}

func run(t *testing.T, bin string, env []string, stdout, stderr io.Writer, args []string) int {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// Kubeconfig writes a kubeconfig for an address where no API server
// listens and returns its path: a CCM checks its cloud config and
// credentials before it talks to Kubernetes.
func Kubeconfig(t *testing.T) string {
	t.Helper()
	return WriteFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: kube-token}}]
`)
}

// WriteFile writes content to a file called name in a new temp dir and
// returns its path.
func WriteFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
