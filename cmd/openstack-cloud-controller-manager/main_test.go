package main_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated OpenStack. The binary is configured by its
// cloud.conf alone: the cloud's environment is empty, so the provider must
// not need (or read) OS_* variables.
func TestBinary(t *testing.T) {
	const wrongPassword, wrongSecret = "wrong-password-4f1c9e", "wrong-app-secret-77d0a1"
	sim := openstacksim.NewServer(t, openstacksim.Options{
		ApplicationCredentials: []openstacksim.ApplicationCredential{{ID: "ac-1", Secret: "the-right-secret"}},
	})
	global := "[Global]\nauth-url = " + sim.AuthURL() + "\nregion = " + sim.Region() + "\n"
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud:   sim.Cloud(),
		Secrets: []string{wrongPassword, wrongSecret, "the-right-secret", openstacksim.DefaultPassword},
		Failures: []cmdtest.Failure{{
			Name: "no cloud config",
			Want: []string{"[Global] auth-url: required", "[Global] region: required", "[Global] credentials: set username"},
		}, {
			Name: "every bad setting at once",
			CloudConfig: global + "username = ccm\npassword = " + wrongPassword + "\ndomain-name = Default\npasword = x\n" +
				"[LoadBalancer]\ncreate-monitor = perhaps\n[Networking]\naddress-sort-order = 10.0.0.0/33\n",
			Want: []string{"[Global] pasword: unknown key (line 7)", `[LoadBalancer] create-monitor: invalid bool "perhaps"`},
		}, {
			Name: "wrong password",
			CloudConfig: global + "username = " + openstacksim.DefaultUsername + "\npassword = " + wrongPassword +
				"\nuser-domain-name = Default\ntenant-name = " + openstacksim.DefaultProject + "\ntenant-domain-name = Default\n",
			Want: []string{
				"authentication failed: Keystone at " + sim.AuthURL() + " answered 401 Unauthorized",
				"check [Global] username and password",
			},
			Request: "keystone.tokens.create",
		}, {
			Name:        "wrong application credential secret",
			CloudConfig: global + "application-credential-id = ac-1\napplication-credential-secret = " + wrongSecret + "\n",
			Want:        []string{"authentication failed", "check [Global] application-credential-id and application-credential-secret"},
			Request:     "keystone.tokens.create",
		}},
		MakeSecret: &cmdtest.MakeSecret{
			Data:    map[string]string{"cloud.conf": sim.CloudConfig()},
			Request: "keystone.tokens.create",
		},
	})
}
