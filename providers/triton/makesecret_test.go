package triton_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestMakeSecret runs make-secret against the simulator
// (frameworktest.RunMakeSecretSuite). Given the key as a path and no
// TRITON_KEY_ID, it checks the credentials against CloudAPI and prints the
// Secret the shipped manifests read: the key itself and its MD5
// fingerprint.
func TestMakeSecret(t *testing.T) {
	var sim *tritonsim.Server // the one the running subtest started, for Check
	frameworktest.RunMakeSecretSuite(t, frameworktest.MakeSecretCase{
		NewProvider: func() framework.Provider { return triton.New() },
		Start: func(t *testing.T) (simkit.Cloud, frameworktest.Settings) {
			sim = tritonsim.NewServer(t, tritonsim.Options{})
			path := filepath.Join(t.TempDir(), "id_rsa")
			if err := os.WriteFile(path, sim.AccountKeyPEM(), 0o600); err != nil {
				t.Fatal(err)
			}
			env := sim.Env(sim.URL())
			env["TRITON_KEY_MATERIAL"], env["TRITON_KEY_ID"] = path, ""
			return sim.Cloud(), frameworktest.Settings{Env: env}
		},
		Manifests:  "../../examples/manifests/triton",
		Credential: "TRITON_KEY_MATERIAL",
		Rejected:   "refused the key",
		// Keys the account does not hold.
		WrongCredential:   newKeyPEM(t),
		OfflineCredential: newKeyPEM(t),
		Check: func(t *testing.T, s *corev1.Secret) {
			got := func(k string) string { return string(s.Data[k]) }
			if got("TRITON_KEY_ID") != sim.KeyFingerprint() || strings.TrimSpace(got("TRITON_KEY_MATERIAL")) != strings.TrimSpace(string(sim.AccountKeyPEM())) ||
				got("TRITON_URL") != sim.URL() || got("TRITON_ACCOUNT") != sim.Account() {
				t.Errorf("Secret data %v", s.Data)
			}
		},
	})
}

// newKeyPEM is a new Ed25519 key in PKCS #8 PEM.
func newKeyPEM(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}
