package digitalocean_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// makeSecret runs the CCM's "make-secret args..." with vars as its whole
// configuration environment; it returns stdout and what it logged.
func makeSecret(t *testing.T, vars map[string]string, args ...string) (stdout, log string, err error) {
	t.Helper()
	frameworktest.SetConfigEnv(t, digitalocean.New(), vars)
	return frameworktest.RunMakeSecret(t, digitalocean.New(), args...)
}

func readSecret(t *testing.T, data []byte) *corev1.Secret { return frameworktest.ReadSecret(t, data) }

func TestMakeSecret(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{Token: "tok-make-secret-0c1d"})
	vars := sim.Env(sim.URL())
	out, log, err := makeSecret(t, vars, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	got := readSecret(t, []byte(out))

	frameworktest.MatchesShippedSecret(t, got, "../../examples/manifests/digitalocean/secret.example.yaml")
	if !strings.Contains(log, "/v2/account") {
		t.Errorf("no API request logged at -v=10, so the check below proves nothing:\n%s", log)
	}
	if strings.Contains(log, vars["DO_ACCESS_TOKEN"]) {
		t.Errorf("the log holds the token:\n%s", log)
	}

	// Mounted as deployment.yaml mounts it: the key as a file under
	// /etc/digitalocean, read through DO_ACCESS_TOKEN_FILE.
	dir := t.TempDir()
	for k, v := range got.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mounted := map[string]string{
		"DO_ACCESS_TOKEN_FILE": filepath.Join(dir, "access-token"),
		"DO_OVERRIDE_URL":      vars["DO_OVERRIDE_URL"],
		"REGION":               vars["REGION"],
	}
	if _, _, err := newCloud(t, digitalocean.New(), mounted); err != nil {
		t.Errorf("the CCM does not start with the printed Secret mounted: %v", err)
	}
}

func TestMakeSecretOffline(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	vars := sim.Env(sim.URL())
	vars["DO_ACCESS_TOKEN"] = "not-checked"
	out, log, err := makeSecret(t, vars, "--offline")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	if s := readSecret(t, []byte(out)); string(s.Data["access-token"]) != "not-checked" {
		t.Errorf("access-token %q, want the token given", s.Data["access-token"])
	}
	if stats := sim.Stats(); len(stats) != 0 {
		t.Errorf("--offline made API calls: %v", stats)
	}
}

func TestMakeSecretFailures(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{Token: "the-right-token"})
	wrong := sim.Env(sim.URL())
	wrong["DO_ACCESS_TOKEN"] = "wrong-token-9e8d"
	out, log, err := makeSecret(t, wrong)
	if err == nil || !strings.Contains(err.Error(), "rejected the token") {
		t.Errorf("wrong token: error %v, want one saying the API rejected the token", err)
	}
	if out != "" {
		t.Errorf("wrong token: printed a Secret:\n%s", out)
	}
	if err != nil && strings.Contains(err.Error()+log, "wrong-token-9e8d") {
		t.Errorf("wrong token: the error or log holds the token: %v\n%s", err, log)
	}

	missing := sim.Env(sim.URL())
	delete(missing, "DO_ACCESS_TOKEN")
	out, _, err = makeSecret(t, missing, "--offline")
	if err == nil || !strings.Contains(err.Error(), "DO_ACCESS_TOKEN: required") || out != "" {
		t.Errorf("missing token: error %v, stdout %q; want an error naming DO_ACCESS_TOKEN and no output", err, out)
	}
}
