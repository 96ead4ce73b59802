package digitalocean_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// helperEnv makes the test binary run the real command, as
// cmd/digitalocean-cloud-controller-manager does, with the arguments in
// helperArgsEnv.
const (
	helperEnv     = "DIGITALOCEAN_CCM_TEST_HELPER"
	helperArgsEnv = "DIGITALOCEAN_CCM_TEST_ARGS"
)

// TestCommandStartup runs the binary's code (framework.Main) in a child
// process and checks that bad settings stop it at start-up with exit status
// 1 and a message naming the variable, and that the token is nowhere in its
// output, even at -v=10.
func TestCommandStartup(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		os.Args = append([]string{"digitalocean-cloud-controller-manager"}, strings.Fields(os.Getenv(helperArgsEnv))...)
		framework.Main(digitalocean.New())
		return
	}
	if testing.Short() {
		t.Skip("starts the command in a child process")
	}
	sim := dosim.NewServer(t, dosim.Options{Token: "the-right-token"})
	kubeconfig := cmdtest.Kubeconfig(t)
	const wrong = "wrong-token-do-not-print"
	tests := []struct {
		name    string
		vars    map[string]string
		wantOut []string
	}{
		{
			name:    "no token",
			vars:    map[string]string{"DO_OVERRIDE_URL": sim.URL(), "REGION": "nyc3"},
			wantOut: []string{"DO_ACCESS_TOKEN: required"},
		},
		{
			name: "wrong token",
			vars: map[string]string{"DO_ACCESS_TOKEN": wrong, "DO_OVERRIDE_URL": sim.URL(), "REGION": "nyc3"},
			wantOut: []string{
				"the DigitalOcean API rejected the token (check DO_ACCESS_TOKEN or DO_ACCESS_TOKEN_FILE)",
				// the request itself was logged, headers included (-v=10)
				`"Cloud API request"`, `operation="account.get"`, "requestHeaders",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCommandStartup$")
			cmd.Env = []string{
				helperEnv + "=1",
				helperArgsEnv + "=--kubeconfig=" + kubeconfig + " --secure-port=0 -v=10",
				"HOME=" + t.TempDir(),
			}
			for k, v := range tt.vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("command ended with %v, want exit status 1; output:\n%s", err, out)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(string(out), want) {
					t.Errorf("output does not mention %q:\n%s", want, out)
				}
			}
			if strings.Contains(string(out), wrong) {
				t.Errorf("output reveals the token:\n%s", out)
			}
		})
	}
}
