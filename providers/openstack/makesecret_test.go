package openstack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// makeSecret runs the CCM's "make-secret --cloud-config=<conf> args..."
// with none of the few variables the provider reads set; it returns stdout
// and what it logged.
func makeSecret(t *testing.T, conf string, args ...string) (stdout, log string, err error) {
	t.Helper()
	frameworktest.SetConfigEnv(t, openstack.New(), map[string]string{"OS_CCM_REGIONAL": "", "OS_CLOUD": "", "OS_CLIENT_CONFIG_FILE": ""})
	path := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return frameworktest.RunMakeSecret(t, openstack.New(), append([]string{"--cloud-config=" + path}, args...)...)
}

func readSecret(t *testing.T, data []byte) *corev1.Secret { return frameworktest.ReadSecret(t, data) }

func TestMakeSecret(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	conf := sim.CloudConfig()
	out, log, err := makeSecret(t, conf, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	got := readSecret(t, []byte(out))

	frameworktest.MatchesShippedSecret(t, got, "../../examples/manifests/openstack/secret.example.yaml")
	if string(got.Data["cloud.conf"]) != conf {
		t.Errorf("cloud.conf is not the file given:\n%s", got.Data["cloud.conf"])
	}
	if !strings.Contains(log, "/identity/v3/auth/tokens") {
		t.Errorf("no API request logged at -v=10, so the check below proves nothing:\n%s", log)
	}
	if password := openstacksim.DefaultPassword; strings.Contains(log, password) {
		t.Errorf("the log holds the password:\n%s", log)
	}

	// Mounted as the shipped manifests mount it: the whole Secret as a
	// directory, --cloud-config=<dir>/cloud.conf.
	dir := t.TempDir()
	for k, v := range got.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mounted, err := os.ReadFile(filepath.Join(dir, "cloud.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := newCloud(t, string(mounted)); err != nil {
		t.Errorf("the CCM does not start with the printed Secret mounted: %v", err)
	}
}

func TestMakeSecretOffline(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	conf := strings.Replace(sim.CloudConfig(), "password = "+openstacksim.DefaultPassword, "password = not-checked", 1)
	out, log, err := makeSecret(t, conf, "--offline")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	if s := readSecret(t, []byte(out)); string(s.Data["cloud.conf"]) != conf {
		t.Errorf("cloud.conf is not the file given:\n%s", s.Data["cloud.conf"])
	}
	if stats := sim.Stats(); len(stats) != 0 {
		t.Errorf("--offline made API calls: %v", stats)
	}
}

func TestMakeSecretFailures(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	conf := sim.CloudConfig()
	wrong := strings.Replace(conf, "password = "+openstacksim.DefaultPassword, "password = wrong-password-3a1f", 1)
	if wrong == conf {
		t.Fatalf("the simulator's cloud.conf has no password line:\n%s", conf)
	}
	out, log, err := makeSecret(t, wrong)
	if err == nil || !strings.Contains(err.Error(), "password") {
		t.Errorf("wrong password: error %v, want one naming the credentials refused", err)
	}
	if out != "" {
		t.Errorf("wrong password: printed a Secret:\n%s", out)
	}
	if err != nil && strings.Contains(err.Error()+log, "wrong-password-3a1f") {
		t.Errorf("wrong password: the error or log holds the password: %v\n%s", err, log)
	}

	var kept []string
	for line := range strings.Lines(conf) {
		if !strings.HasPrefix(line, "auth-url") {
			kept = append(kept, line)
		}
	}
	out, _, err = makeSecret(t, strings.Join(kept, ""), "--offline")
	if err == nil || !strings.Contains(err.Error(), "[Global] auth-url: required") || out != "" {
		t.Errorf("missing auth-url: error %v, stdout %q; want an error naming [Global] auth-url and no output", err, out)
	}
}
