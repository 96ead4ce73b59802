package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestBinaryStartup runs the real binary and checks that bad settings stop
// it at start-up with exit status 1 and a message naming the variable, and
// that the token is nowhere in its output, even at -v=10, where requests
// are logged with their headers.
func TestBinaryStartup(t *testing.T) {
	bin := cmdtest.Build(t)
	kc := cmdtest.Kubeconfig(t)
	sim := dosim.NewServer(t, dosim.Options{Token: "the-right-token"})
	const wrong = "wrong-token-do-not-print"
	tests := []struct {
		name    string
		env     []string
		wantOut []string
	}{
		{
			name:    "no token",
			env:     []string{"DO_OVERRIDE_URL=" + sim.URL(), "REGION=nyc3"},
			wantOut: []string{"DO_ACCESS_TOKEN: required"},
		},
		{
			name: "wrong token",
			env:  []string{"DO_ACCESS_TOKEN=" + wrong, "DO_OVERRIDE_URL=" + sim.URL(), "REGION=nyc3"},
			wantOut: []string{
				"the DigitalOcean API rejected the token (check DO_ACCESS_TOKEN or DO_ACCESS_TOKEN_FILE)",
				// the request itself was logged, headers included (-v=10)
				`"Cloud API request"`, `operation="account.get"`, "requestHeaders",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := cmdtest.Run(t, bin, tt.env, "--kubeconfig="+kc, "--secure-port=0", "-v=10")
			if code != 1 {
				t.Fatalf("exit status %d, want 1; output:\n%s", code, out)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("output does not mention %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, wrong) {
				t.Errorf("output reveals the token:\n%s", out)
			}
			if sim.Writes() != 0 {
				t.Errorf("%d cloud writes with bad settings", sim.Writes())
			}
		})
	}
}

// TestBinaryMakeSecret runs the real binary's make-secret: the Secret on
// stdout, the log on stderr, the token only in the former, even at -v=10.
func TestBinaryMakeSecret(t *testing.T) {
	bin := cmdtest.Build(t)
	const token = "make-secret-token-do-not-log"
	sim := dosim.NewServer(t, dosim.Options{Token: token})
	run := func(tok string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, "make-secret", "-v=10")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
			"DO_ACCESS_TOKEN=" + tok, "DO_OVERRIDE_URL=" + sim.URL(), "REGION=nyc3"}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return out.String(), errOut.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), 0
	}

	stdout, stderr, code := run(token)
	if code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(stdout), &s); err != nil || string(s.Data["access-token"]) != token {
		t.Errorf("stdout is not the Secret with the token (%v):\n%s", err, stdout)
	}
	if !strings.Contains(stderr, `operation="account.get"`) {
		t.Errorf("stderr has no request log at -v=10:\n%s", stderr)
	}
	if strings.Contains(stderr, token) {
		t.Errorf("stderr reveals the token:\n%s", stderr)
	}

	const wrong = "wrong-make-secret-token"
	stdout, stderr, code = run(wrong)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "rejected the token") || strings.Contains(stderr, wrong) {
		t.Errorf("wrong token: exit status %d, stdout %q, stderr:\n%s\nwant 1, nothing, and a message without the token", code, stdout, stderr)
	}
}
