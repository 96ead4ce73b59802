package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated Brightbox.
func TestBinary(t *testing.T) {
	const wrong = "wrong-secret-do-not-print"
	sim := gbsim.NewServer(t, gbsim.Options{})
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud:   sim.Cloud(),
		Secrets: []string{wrong},
		Failures: []cmdtest.Failure{{
			Name: "no credentials",
			Env:  map[string]string{"BRIGHTBOX_CLIENT": "", "BRIGHTBOX_CLIENT_SECRET": ""},
			Want: []string{"BRIGHTBOX_CLIENT: no credentials"},
		}, {
			Name: "not a URL",
			Env:  map[string]string{"BRIGHTBOX_API_URL": "ftp://" + strings.TrimPrefix(sim.URL(), "http://")},
			Want: []string{"BRIGHTBOX_API_URL: ", "is not an http(s) URL"},
		}, {
			Name:    "wrong secret",
			Env:     map[string]string{"BRIGHTBOX_CLIENT_SECRET": wrong},
			Want:    []string{"check BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET"},
			Request: "token.create",
		}},
		MakeSecret: &cmdtest.MakeSecret{
			Data:    map[string]string{"BRIGHTBOX_CLIENT_SECRET": sim.ClientSecret()},
			Request: "token.create",
		},
	})
}
