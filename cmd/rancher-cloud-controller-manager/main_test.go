package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated Rancher 1.x (Cattle) environment.
func TestBinary(t *testing.T) {
	const wrong = "wrong-secret-do-not-print"
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	env := sim.Env(sim.URL())
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud:   sim.Cloud(),
		Secrets: []string{wrong},
		Failures: []cmdtest.Failure{{
			Name: "no URL",
			Env:  map[string]string{"CATTLE_URL": ""},
			Want: []string{"CATTLE_URL: required"},
		}, {
			Name: "no secret key",
			Env:  map[string]string{"CATTLE_SECRET_KEY": ""},
			Want: []string{"CATTLE_SECRET_KEY: required"},
		}, {
			Name: "not a URL",
			Env:  map[string]string{"CATTLE_URL": "ftp://" + strings.TrimPrefix(env["CATTLE_URL"], "http://")},
			Want: []string{"CATTLE_URL: ", "is not an http(s) URL"},
		}, {
			Name:    "wrong secret key",
			Env:     map[string]string{"CATTLE_SECRET_KEY": wrong},
			Want:    []string{"CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API at"},
			Request: "root.get",
		}},
		MakeSecret: &cmdtest.MakeSecret{
			Data:    map[string]string{"CATTLE_SECRET_KEY": env["CATTLE_SECRET_KEY"]},
			Request: "root.get",
		},
	})
}
