package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// buildBinary builds this command into a temp dir, as `make build` would.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "openstack-cloud-controller-manager")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// writeFile writes content to a new file in a temp dir.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeconfig points at an address where no API server listens: the CCM
// checks its cloud config and credentials before it talks to Kubernetes.
const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: kube-token}}]
`

func run(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// No OS_* variables: the provider must not need (or read) them.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
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

// TestBinaryStartup runs the real binary and checks that a bad cloud.conf
// or rejected credentials stop it at start-up with a message naming the
// [Global] settings, and that no secret reaches its output, even at -v=10,
// where requests are logged with their headers and bodies.
func TestBinaryStartup(t *testing.T) {
	bin := buildBinary(t)
	kc := writeFile(t, "kubeconfig", kubeconfig)
	sim := openstacksim.NewServer(t, openstacksim.Options{
		ApplicationCredentials: []openstacksim.ApplicationCredential{{ID: "ac-1", Secret: "the-right-secret"}},
	})
	const wrongPassword = "wrong-password-4f1c9e"
	const wrongSecret = "wrong-app-secret-77d0a1"
	global := "[Global]\nauth-url = " + sim.AuthURL() + "\nregion = " + sim.Region() + "\n"
	tests := []struct {
		name      string
		cloudConf string
		wantOut   []string
		secrets   []string
	}{
		{
			name:      "no cloud config",
			cloudConf: "",
			wantOut:   []string{"[Global] auth-url: required", "[Global] region: required", "[Global] credentials: set username"},
		},
		{
			name: "every bad setting at once",
			cloudConf: global + "username = ccm\npassword = " + wrongPassword + "\ndomain-name = Default\npasword = x\n" +
				"[LoadBalancer]\ncreate-monitor = perhaps\n[Networking]\naddress-sort-order = 10.0.0.0/33\n",
			wantOut: []string{"[Global] pasword: unknown key (line 7)", `[LoadBalancer] create-monitor: invalid bool "perhaps"`},
			secrets: []string{wrongPassword},
		},
		{
			name: "wrong password",
			cloudConf: global + "username = " + openstacksim.DefaultUsername + "\npassword = " + wrongPassword +
				"\nuser-domain-name = Default\ntenant-name = " + openstacksim.DefaultProject + "\ntenant-domain-name = Default\n",
			wantOut: []string{
				"authentication failed: Keystone at " + sim.AuthURL() + " answered 401 Unauthorized",
				"check [Global] username and password",
				// the request itself was logged, headers and body included (-v=10)
				`"Cloud API request"`, `operation="keystone.tokens.create"`, "requestHeaders",
			},
			secrets: []string{wrongPassword},
		},
		{
			name:      "wrong application credential secret",
			cloudConf: global + "application-credential-id = ac-1\napplication-credential-secret = " + wrongSecret + "\n",
			wantOut: []string{
				"authentication failed", "check [Global] application-credential-id and application-credential-secret",
			},
			secrets: []string{wrongSecret, "the-right-secret"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--kubeconfig=" + kc, "--secure-port=0", "-v=10"}
			if tt.cloudConf != "" {
				args = append(args, "--cloud-config="+writeFile(t, "cloud.conf", tt.cloudConf))
			}
			out, code := run(t, bin, args...)
			if code != 1 {
				t.Fatalf("exit status %d, want 1; output:\n%s", code, out)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("output does not mention %q:\n%s", want, out)
				}
			}
			for _, secret := range tt.secrets {
				if strings.Contains(out, secret) {
					t.Errorf("output reveals %q:\n%s", secret, out)
				}
			}
		})
	}
}
