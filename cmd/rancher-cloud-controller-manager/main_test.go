package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestBinaryStartup runs the real binary and checks that bad settings stop
// it at start-up with exit status 1 and a message naming the variable, and
// that no credential is anywhere in its output, even at -v=10, where
// requests are logged with their headers and bodies.
func TestBinaryStartup(t *testing.T) {
	bin := cmdtest.Build(t)
	kc := cmdtest.Kubeconfig(t)
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	url := sim.ProjectURL(sim.URL())
	const wrong = "wrong-secret-do-not-print"
	tests := []struct {
		name    string
		env     []string
		wantOut []string
	}{
		{
			name:    "no URL",
			env:     []string{"CATTLE_ACCESS_KEY=" + ranchersim.DefaultAccessKey, "CATTLE_SECRET_KEY=" + wrong},
			wantOut: []string{"CATTLE_URL: required"},
		},
		{
			name:    "no secret key",
			env:     []string{"CATTLE_URL=" + url, "CATTLE_ACCESS_KEY=" + ranchersim.DefaultAccessKey},
			wantOut: []string{"CATTLE_SECRET_KEY: required"},
		},
		{
			name:    "not a URL",
			env:     []string{"CATTLE_URL=ftp://" + strings.TrimPrefix(url, "http://"), "CATTLE_ACCESS_KEY=" + ranchersim.DefaultAccessKey, "CATTLE_SECRET_KEY=" + wrong},
			wantOut: []string{"CATTLE_URL: ", "is not an http(s) URL"},
		},
		{
			name: "wrong secret key",
			env:  []string{"CATTLE_URL=" + url, "CATTLE_ACCESS_KEY=" + ranchersim.DefaultAccessKey, "CATTLE_SECRET_KEY=" + wrong},
			wantOut: []string{
				"CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API at",
				// the request itself was logged, headers included (-v=10)
				`"Cloud API request"`, "requestHeaders",
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
				t.Errorf("output reveals the secret key:\n%s", out)
			}
			if sim.Writes() != 0 {
				t.Errorf("%d cloud writes with bad settings", sim.Writes())
			}
		})
	}
}

// TestBinaryFlags runs the real binary's --version and --help: its name is
// the existing CCM's, and it takes the framework's flags.
func TestBinaryFlags(t *testing.T) {
	bin := cmdtest.Build(t)
	out, code := cmdtest.Run(t, bin, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "rancher-cloud-controller-manager ") {
		t.Errorf("--version: exit status %d, output %q", code, out)
	}
	out, code = cmdtest.Run(t, bin, nil, "--help")
	if code != 0 {
		t.Fatalf("--help: exit status %d:\n%s", code, out)
	}
	for _, want := range []string{"--kubeconfig", "--cloud-config", "--leader-elect", "--cloud-api-qps", "--instance-cache-ttl", "--load-balancer-cache-ttl"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}
