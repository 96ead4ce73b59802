package rancher_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// makeSecret runs the CCM's "make-secret args..." with vars as its whole
// configuration environment; it returns stdout and what it logged.
func makeSecret(t *testing.T, vars map[string]string, args ...string) (stdout, log string, err error) {
	t.Helper()
	frameworktest.SetConfigEnv(t, rancher.New(), vars)
	return frameworktest.RunMakeSecret(t, rancher.New(), args...)
}

func readSecret(t *testing.T, data []byte) *corev1.Secret { return frameworktest.ReadSecret(t, data) }

func TestMakeSecret(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	vars := sim.Env(sim.URL())
	out, log, err := makeSecret(t, vars, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	got := readSecret(t, []byte(out))

	frameworktest.MatchesShippedSecret(t, got, "../../examples/manifests/rancher/secret.example.yaml")
	if !strings.Contains(log, "/v2-beta/projects/") {
		t.Errorf("no API request logged at -v=10, so the check below proves nothing:\n%s", log)
	}
	if strings.Contains(log, vars["CATTLE_SECRET_KEY"]) {
		t.Errorf("the log holds the secret key:\n%s", log)
	}

	// Mounted as deployment.yaml mounts it: CATTLE_URL and
	// CATTLE_ACCESS_KEY from keys, the secret key as a file.
	dir := t.TempDir()
	for k, v := range got.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mounted := map[string]string{
		"CATTLE_URL":             string(got.Data["CATTLE_URL"]),
		"CATTLE_ACCESS_KEY":      string(got.Data["CATTLE_ACCESS_KEY"]),
		"CATTLE_SECRET_KEY_FILE": filepath.Join(dir, "CATTLE_SECRET_KEY"),
	}
	_, ctx := ktesting.NewTestContext(t)
	if _, err := newCloud(ctx, rancher.New(), mounted, nil, -1); err != nil {
		t.Errorf("the CCM does not start with the printed Secret mounted: %v", err)
	}
}

func TestMakeSecretOffline(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	vars := sim.Env(sim.URL())
	vars["CATTLE_SECRET_KEY"] = "not-checked"
	out, log, err := makeSecret(t, vars, "--offline")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	if s := readSecret(t, []byte(out)); string(s.Data["CATTLE_SECRET_KEY"]) != "not-checked" {
		t.Errorf("CATTLE_SECRET_KEY %q, want the secret key given", s.Data["CATTLE_SECRET_KEY"])
	}
	if stats := sim.Stats(); len(stats) != 0 {
		t.Errorf("--offline made API calls: %v", stats)
	}
}

func TestMakeSecretFailures(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	wrong := sim.Env(sim.URL())
	wrong["CATTLE_SECRET_KEY"] = "wrong-secret-5b7c"
	out, log, err := makeSecret(t, wrong)
	if err == nil || !strings.Contains(err.Error(), "CATTLE_SECRET_KEY") {
		t.Errorf("wrong secret key: error %v, want one naming the key refused", err)
	}
	if out != "" {
		t.Errorf("wrong secret key: printed a Secret:\n%s", out)
	}
	if err != nil && strings.Contains(err.Error()+log, "wrong-secret-5b7c") {
		t.Errorf("wrong secret key: the error or log holds the secret: %v\n%s", err, log)
	}

	missing := sim.Env(sim.URL())
	delete(missing, "CATTLE_SECRET_KEY")
	out, _, err = makeSecret(t, missing, "--offline")
	if err == nil || !strings.Contains(err.Error(), "CATTLE_SECRET_KEY: required") || out != "" {
		t.Errorf("missing secret key: error %v, stdout %q; want an error naming CATTLE_SECRET_KEY and no output", err, out)
	}
}
