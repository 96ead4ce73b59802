package main_test

import (
	"strings"
	"testing"

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
