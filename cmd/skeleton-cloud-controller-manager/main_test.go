package main_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/internal/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CCM binary must pass (cmdtest.CheckCCM)
// against a simulated Skeleton Cloud. Skeleton has no make-secret.
func TestBinary(t *testing.T) {
	const wrong = "wrong-token-4f1c9e"
	cmdtest.CheckCCM(t, cmdtest.CCM{
		Cloud:   skeletonsim.NewServer(t, skeletonsim.Options{}).Cloud(),
		Secrets: []string{wrong},
		Failures: []cmdtest.Failure{{
			Name: "missing settings",
			Env:  map[string]string{"SKELETON_API_URL": "", "SKELETON_TOKEN": ""},
			Want: []string{"SKELETON_API_URL: required", "SKELETON_TOKEN: required"},
		}, {
			Name:    "wrong token",
			Env:     map[string]string{"SKELETON_TOKEN": wrong},
			Want:    []string{"the Skeleton API rejected the token (check SKELETON_TOKEN or SKELETON_TOKEN_FILE)"},
			Request: "instances.list",
		}},
	})
}
