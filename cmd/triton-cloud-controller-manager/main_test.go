package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestBinaryStartup runs the real binary and checks that bad settings stop
// it at start-up with exit status 1 and a message naming the variable, and
// that the key is nowhere in its output, even at -v=10, where requests are
// logged with their headers.
func TestBinaryStartup(t *testing.T) {
	bin := cmdtest.Build(t)
	kc := cmdtest.Kubeconfig(t)
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	env := sim.Env(sim.URL())
	key := env["TRITON_KEY_MATERIAL"]
	keyLine := strings.Split(key, "\n")[1]
	tests := []struct {
		name    string
		env     []string
		wantOut []string
	}{
		{
			name:    "no credentials",
			env:     []string{"TRITON_URL=" + sim.URL()},
			wantOut: []string{"TRITON_ACCOUNT: required", "TRITON_KEY_MATERIAL: required"},
		},
		{
			name:    "not a URL",
			env:     []string{"TRITON_URL=ftp://example.com", "TRITON_ACCOUNT=" + sim.Account(), "TRITON_KEY_MATERIAL=" + key},
			wantOut: []string{"TRITON_URL: ftp://example.com is not an http(s) URL"},
		},
		{
			name:    "fingerprint of another key",
			env:     []string{"TRITON_URL=" + sim.URL(), "TRITON_ACCOUNT=" + sim.Account(), "TRITON_KEY_MATERIAL=" + key, "TRITON_KEY_ID=00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"},
			wantOut: []string{"TRITON_KEY_ID: 00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff is not the fingerprint of the key"},
		},
		{
			name: "wrong account",
			env:  []string{"TRITON_URL=" + sim.URL(), "TRITON_ACCOUNT=nobody", "TRITON_KEY_MATERIAL=" + key},
			// the request itself was logged, headers included (-v=10)
			wantOut: []string{"TRITON_", `"Cloud API request"`, `operation="account.get"`},
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
			if strings.Contains(out, keyLine) {
				t.Errorf("output reveals the key:\n%s", out)
			}
			if sim.Writes() != 0 {
				t.Errorf("%d cloud writes with bad settings", sim.Writes())
			}
		})
	}
}
