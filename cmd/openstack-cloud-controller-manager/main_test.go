package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestBinaryStartup runs the real binary and checks that a bad cloud.conf
// or rejected credentials stop it at start-up with a message naming the
// [Global] settings, and that no secret reaches its output, even at -v=10,
// where requests are logged with their headers and bodies.
func TestBinaryStartup(t *testing.T) {
	bin := cmdtest.Build(t)
	kc := cmdtest.Kubeconfig(t)
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
				args = append(args, "--cloud-config="+cmdtest.WriteFile(t, "cloud.conf", tt.cloudConf))
			}
			// No OS_* variables: the provider must not need (or read) them.
			out, code := cmdtest.Run(t, bin, nil, args...)
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
