// Package cmdtest runs a command of this module the way an operator does:
// built with go build, in a clean environment, against a kubeconfig, for
// the tests of the commands (cmd/*/main_test.go, and tests that run a
// command's code in a child process).
package cmdtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build builds the command in the current directory (a test's package
// directory: the command under test) into a temp dir, as `make build`
// would, and returns the binary's path. It skips the test with -short.
func Build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Run runs bin with args in an environment of PATH, HOME (a new empty
// directory) and env ("KEY=value" each), nothing else, and returns its
// combined output and exit status.
func Run(t *testing.T, bin string, env []string, args ...string) (out string, exitCode int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	b, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(b), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), 0
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
