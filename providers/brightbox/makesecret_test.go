package brightbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// makeSecret runs the CCM's "make-secret args..." with vars as its whole
// configuration environment; it returns stdout and what it logged.
func makeSecret(t *testing.T, vars map[string]string, args ...string) (stdout, log string, err error) {
	t.Helper()
	frameworktest.SetConfigEnv(t, brightbox.New(), vars)
	return frameworktest.RunMakeSecret(t, brightbox.New(), args...)
}

func readSecret(t *testing.T, data []byte) *corev1.Secret { return frameworktest.ReadSecret(t, data) }

func TestMakeSecret(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	vars := sim.Env(sim.URL())
	vars["BRIGHTBOX_ACCOUNT"] = "" // the shipped manifests do not set it: the client's one account
	out, log, err := makeSecret(t, vars, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	got := readSecret(t, []byte(out))

	frameworktest.MatchesShippedSecret(t, got, "../../examples/manifests/brightbox/secret.example.yaml")
	if !strings.Contains(log, "/token") {
		t.Errorf("no API request logged at -v=10, so the check below proves nothing:\n%s", log)
	}
	if strings.Contains(log, vars["BRIGHTBOX_CLIENT_SECRET"]) {
		t.Errorf("the log holds the client secret:\n%s", log)
	}

	// Mounted as deployment.yaml mounts it: BRIGHTBOX_API_URL and
	// BRIGHTBOX_CLIENT from keys, the client secret as a file.
	dir := t.TempDir()
	for k, v := range got.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mounted := map[string]string{
		"BRIGHTBOX_API_URL":            string(got.Data["BRIGHTBOX_API_URL"]),
		"BRIGHTBOX_CLIENT":             string(got.Data["BRIGHTBOX_CLIENT"]),
		"BRIGHTBOX_CLIENT_SECRET_FILE": filepath.Join(dir, "BRIGHTBOX_CLIENT_SECRET"),
	}
	_, ctx := ktesting.NewTestContext(t)
	if _, err := newCloud(ctx, brightbox.New(), mounted, nil); err != nil {
		t.Errorf("the CCM does not start with the printed Secret mounted: %v", err)
	}
}

func TestMakeSecretOffline(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	vars := sim.Env(sim.URL())
	vars["BRIGHTBOX_CLIENT_SECRET"] = "not-checked"
	out, log, err := makeSecret(t, vars, "--offline")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	if s := readSecret(t, []byte(out)); string(s.Data["BRIGHTBOX_CLIENT_SECRET"]) != "not-checked" {
		t.Errorf("BRIGHTBOX_CLIENT_SECRET %q, want the secret given", s.Data["BRIGHTBOX_CLIENT_SECRET"])
	}
	if stats := sim.Stats(); len(stats) != 0 {
		t.Errorf("--offline made API calls: %v", stats)
	}
}

func TestMakeSecretFailures(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	wrong := sim.Env(sim.URL())
	wrong["BRIGHTBOX_CLIENT_SECRET"] = "wrong-secret-5b7c"
	out, log, err := makeSecret(t, wrong)
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_CLIENT_SECRET") {
		t.Errorf("wrong secret: error %v, want one naming the credentials refused", err)
	}
	if out != "" {
		t.Errorf("wrong secret: printed a Secret:\n%s", out)
	}
	if err != nil && strings.Contains(err.Error()+log, "wrong-secret-5b7c") {
		t.Errorf("wrong secret: the error or log holds the secret: %v\n%s", err, log)
	}

	missing := sim.Env(sim.URL())
	delete(missing, "BRIGHTBOX_CLIENT_SECRET")
	out, _, err = makeSecret(t, missing, "--offline")
	if err == nil || !strings.Contains(err.Error(), "BRIGHTBOX_CLIENT_SECRET: required") || out != "" {
		t.Errorf("missing secret: error %v, stdout %q; want an error naming BRIGHTBOX_CLIENT_SECRET and no output", err, out)
	}
}
