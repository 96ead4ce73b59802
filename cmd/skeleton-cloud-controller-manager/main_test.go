package main_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/internal/cmdtest"
)

func TestBinaryRejectsBadConfig(t *testing.T) {
	bin := cmdtest.Build(t)
	kc := cmdtest.Kubeconfig(t)

	t.Run("missing settings are named", func(t *testing.T) {
		out, code := cmdtest.Run(t, bin, nil, "--kubeconfig="+kc, "--secure-port=0")
		if code == 0 {
			t.Fatalf("exit 0 without credentials:\n%s", out)
		}
		for _, want := range []string{"SKELETON_API_URL: required", "SKELETON_TOKEN: required"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("wrong token: clear error, token never logged", func(t *testing.T) {
		sim := skeletonsim.NewServer(t, skeletonsim.Options{})
		const wrong = "wrong-token-4f1c9e"
		out, code := cmdtest.Run(t, bin, []string{"SKELETON_API_URL=" + sim.URL(), "SKELETON_TOKEN=" + wrong},
			"--kubeconfig="+kc, "--secure-port=0", "-v=10")
		if code == 0 {
			t.Fatalf("exit 0 with a rejected token:\n%s", out)
		}
		if !strings.Contains(out, "SKELETON_TOKEN") || !strings.Contains(strings.ToLower(out), "rejected") {
			t.Errorf("output does not say the token was rejected:\n%s", out)
		}
		if strings.Contains(out, wrong) {
			t.Errorf("the token appears in the output at -v=10:\n%s", out)
		}
		if !strings.Contains(out, "Cloud API request") {
			t.Errorf("no request log at -v=10, so the check above proves nothing:\n%s", out)
		}
		if sim.Writes() != 0 {
			t.Errorf("%d cloud writes with a rejected token", sim.Writes())
		}
	})
}
