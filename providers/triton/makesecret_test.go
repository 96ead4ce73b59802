package triton_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// make-secret, given the key as a path and no TRITON_KEY_ID, checks the
// credentials against CloudAPI and prints the Secret the shipped manifests
// read: the key itself and its MD5 fingerprint; nothing secret is logged.
func TestMakeSecret(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	path := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(path, sim.AccountKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := sim.Env(sim.URL())
	vars["TRITON_KEY_MATERIAL"], vars["TRITON_KEY_ID"] = path, ""
	frameworktest.SetConfigEnv(t, triton.New(), vars)
	out, log, err := frameworktest.RunMakeSecret(t, triton.New(), "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	s := frameworktest.ReadSecret(t, []byte(out))
	frameworktest.MatchesShippedSecret(t, s, "../../examples/manifests/triton/secret.example.yaml")
	got := func(k string) string { return string(s.Data[k]) }
	if got("TRITON_KEY_ID") != sim.KeyFingerprint() || strings.TrimSpace(got("TRITON_KEY_MATERIAL")) != strings.TrimSpace(string(sim.AccountKeyPEM())) ||
		got("TRITON_URL") != sim.URL() || got("TRITON_ACCOUNT") != sim.Account() {
		t.Errorf("Secret data %v", s.Data)
	}
	if line := strings.Split(string(sim.AccountKeyPEM()), "\n")[1]; strings.Contains(log, line) {
		t.Errorf("make-secret logged the key:\n%s", log)
	}
}
