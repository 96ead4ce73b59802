package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated Triton.
func TestBinary(t *testing.T) {
	const otherKeyID = "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	key := sim.Env(sim.URL())["TRITON_KEY_MATERIAL"]
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud: sim.Cloud(),
		// A line of the key: a log escapes the line breaks of the whole.
		Secrets: []string{strings.Split(key, "\n")[1]},
		Failures: []cmdtest.Failure{{
			Name: "no credentials",
			Env:  map[string]string{"TRITON_ACCOUNT": "", "TRITON_KEY_ID": "", "TRITON_KEY_MATERIAL": ""},
			Want: []string{"TRITON_ACCOUNT: required", "TRITON_KEY_MATERIAL: required"},
		}, {
			Name: "not a URL",
			Env:  map[string]string{"TRITON_URL": "ftp://example.com"},
			Want: []string{"TRITON_URL: ftp://example.com is not an http(s) URL"},
		}, {
			Name: "fingerprint of another key",
			Env:  map[string]string{"TRITON_KEY_ID": otherKeyID},
			Want: []string{"TRITON_KEY_ID: " + otherKeyID + " is not the fingerprint of the key"},
		}, {
			Name:    "wrong account",
			Env:     map[string]string{"TRITON_ACCOUNT": "nobody"},
			Want:    []string{"TRITON_"},
			Request: "account.get",
		}},
		MakeSecret: &cmdtest.MakeSecret{
			Data:    map[string]string{"TRITON_KEY_MATERIAL": key},
			Request: "account.get",
		},
	})
}
