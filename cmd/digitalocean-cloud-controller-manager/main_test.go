package main_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated DigitalOcean.
func TestBinary(t *testing.T) {
	const token, wrong = "the-right-token", "wrong-token-do-not-print"
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud:   dosim.NewServer(t, dosim.Options{Token: token}).Cloud(),
		Secrets: []string{wrong},
		Failures: []cmdtest.Failure{{
			Name: "no token",
			Env:  map[string]string{"DO_ACCESS_TOKEN": ""},
			Want: []string{"DO_ACCESS_TOKEN: required"},
		}, {
			Name:    "wrong token",
			Env:     map[string]string{"DO_ACCESS_TOKEN": wrong},
			Want:    []string{"the DigitalOcean API rejected the token (check DO_ACCESS_TOKEN or DO_ACCESS_TOKEN_FILE)"},
			Request: "account.get",
		}},
		MakeSecret: &cmdtest.MakeSecret{
			Data:    map[string]string{"access-token": token},
			Request: "account.get",
		},
	})
}
