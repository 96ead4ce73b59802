package triton_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

func pemOf(t *testing.T, typ string, der []byte, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func openSSH(t *testing.T, key crypto.PrivateKey) string {
	t.Helper()
	b, err := ssh.MarshalPrivateKey(key, "test key")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(b))
}

func pkcs8(t *testing.T, key crypto.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	return pemOf(t, "PRIVATE KEY", der, err)
}

// Every key form users have authenticates against the simulator, which
// verifies the HTTP Signature as CloudAPI does: the keyId names the key by
// its MD5 fingerprint, under the account or its sub-user, whichever
// fingerprint TRITON_KEY_ID gives.
func TestKeyFormatsAuthenticate(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	sec1, err := x509.MarshalECPrivateKey(p256)
	tests := []struct {
		name, material string
		key            crypto.Signer
		user           string
		sha256         bool
	}{
		{"OpenSSH RSA", openSSH(t, rsaKey), rsaKey, "", false},
		{"PKCS#1 RSA", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil), rsaKey, "", false},
		{"PKCS#8 RSA, SHA256 fingerprint", pkcs8(t, rsaKey), rsaKey, "", true},
		{"SEC1 ECDSA P-256", pemOf(t, "EC PRIVATE KEY", sec1, err), p256, "", false},
		{"PKCS#8 ECDSA P-384", pkcs8(t, p384), p384, "", true},
		{"OpenSSH ECDSA P-521", openSSH(t, p521), p521, "", false},
		{"OpenSSH Ed25519", openSSH(t, edKey), edKey, "", true},
		{"PKCS#8 Ed25519, sub-user", pkcs8(t, edKey), edKey, "ops", false},
		{"PKCS#1 RSA, sub-user, SHA256 fingerprint", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil), rsaKey, "ops", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := tritonsim.NewServer(t, tritonsim.Options{})
			md5, sha, err := sim.AddKey(sim.Account(), tt.user, tt.key.Public())
			if err != nil {
				t.Fatal(err)
			}
			sim.RemoveKey(sim.Account(), "", sim.KeyFingerprint()) // only the key under test signs
			id := md5
			if tt.sha256 {
				id = sha
			}
			env := map[string]string{"TRITON_KEY_MATERIAL": tt.material, "TRITON_KEY_ID": id, "TRITON_USER": tt.user}
			p := mustStart(t, sim, env)
			if _, err := p.Instances().ListInstances(ctx(t)); err != nil {
				t.Fatalf("ListInstances: %v", err)
			}
			// Unset, TRITON_KEY_ID is computed from the key.
			env["TRITON_KEY_ID"] = ""
			mustStart(t, sim, env)
		})
	}
}

// The key may be given as the path of its file, as triton-go's examples
// read TRITON_KEY_MATERIAL.
func TestKeyMaterialAsAPath(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	path := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(path, sim.AccountKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	mustStart(t, sim, map[string]string{"TRITON_KEY_MATERIAL": path})
}

// Keys CloudAPI would refuse, or that do not match TRITON_KEY_ID, stop
// Init with an error naming the variable, and no error quotes a key.
func TestKeyErrors(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	env := sim.Env(sim.URL())
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	otherPEM := pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(other), nil)
	block, _ := pem.Decode(sim.AccountKeyPEM())
	encrypted, err := x509.EncryptPEMBlock(rand.Reader, block.Type, block.Bytes, []byte("pw"), x509.PEMCipherAES256) //nolint:staticcheck // an old-style encrypted key, as users have them
	if err != nil {
		t.Fatal(err)
	}
	const garbage = "c2VjcmV0LWdhcmJhZ2U"
	failures := []frameworktest.StartupFailure{
		{Name: "fingerprint of another key", Env: with(env, map[string]string{"TRITON_KEY_ID": "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}), Want: []string{"TRITON_KEY_ID: SHA256:AAAA", "is not the fingerprint of the key in TRITON_KEY_MATERIAL"}},
		{Name: "a key the account lacks: the signature is refused", Env: with(env, map[string]string{"TRITON_KEY_MATERIAL": otherPEM, "TRITON_KEY_ID": ""}), Want: []string{"TRITON_KEY_ID: CloudAPI at", "refused the key"}},
		{Name: "encrypted", Env: with(env, map[string]string{"TRITON_KEY_MATERIAL": string(pem.EncodeToMemory(encrypted))}), Want: []string{"TRITON_KEY_MATERIAL: the key is encrypted"}},
		{Name: "garbage", Env: with(env, map[string]string{"TRITON_KEY_MATERIAL": "-----BEGIN RSA PRIVATE KEY-----\n" + garbage + "=\n-----END RSA PRIVATE KEY-----\n"}), Want: []string{"TRITON_KEY_MATERIAL: not a private key"}},
		{Name: "neither key nor file", Env: with(env, map[string]string{"TRITON_KEY_MATERIAL": garbage}), Want: []string{"TRITON_KEY_MATERIAL: neither a PEM or OpenSSH private key nor the path"}},
	}
	secrets := append([]string{garbage}, keyLines(otherPEM)...)
	secrets = append(secrets, keyLines(string(sim.AccountKeyPEM()))...)
	for i := range failures {
		failures[i].Secrets = secrets
	}
	frameworktest.RunStartupFailures(t, newProvider, failures)
}
