package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

// buildBinary builds this command into a temp dir, as `make build` would.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "skeleton-cloud-controller-manager")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// kubeconfig points at an address where no API server listens: the CCM
// checks its cloud config and credentials before it talks to Kubernetes.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: kube-token}}]
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestBinaryRejectsBadConfig(t *testing.T) {
	bin := buildBinary(t)
	kc := kubeconfig(t)

	t.Run("missing settings are named", func(t *testing.T) {
		out, code := run(t, bin, nil, "--kubeconfig="+kc, "--secure-port=0")
		if code == 0 {
			t.Fatalf("exit 0 without credentials:\n%s", out)
		}
		for _, want := range []string{"SKELETON_API_URL: required", "SKELETON_TOKEN: required"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("wrong token: clear error, token never logged", func(t *testing.T) {
		sim := skeletonsim.NewServer(t, skeletonsim.Options{})
		const wrong = "wrong-token-4f1c9e"
		out, code := run(t, bin, []string{"SKELETON_API_URL=" + sim.URL(), "SKELETON_TOKEN=" + wrong},
			"--kubeconfig="+kc, "--secure-port=0", "-v=10")
		if code == 0 {
			t.Fatalf("exit 0 with a rejected token:\n%s", out)
		}
		if !strings.Contains(out, "SKELETON_TOKEN") || !strings.Contains(strings.ToLower(out), "rejected") {
			t.Errorf("output does not say the token was rejected:\n%s", out)
		}
		if strings.Contains(out, wrong) {
			t.Errorf("the token appears in the output at -v=10:\n%s", out)
		}
		if !strings.Contains(out, "Cloud API request") {
			t.Errorf("no request log at -v=10, so the check above proves nothing:\n%s", out)
		}
		if sim.Writes() != 0 {
			t.Errorf("%d cloud writes with a rejected token", sim.Writes())
		}
	})
}
