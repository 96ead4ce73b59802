package triton

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
)

// A key is found by its fingerprint in every form CloudAPI, triton-go and
// ssh-keygen print it.
func TestKeyIDForms(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	k, err := parsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimPrefix(k.sha256, "SHA256:")
	for _, id := range []string{
		k.md5, strings.ToUpper(k.md5), strings.ReplaceAll(k.md5, ":", ""), "MD5:" + k.md5,
		k.sha256, k.sha256 + "=", " " + k.md5 + " ",
	} {
		if !k.matches(id) {
			t.Errorf("%q does not match the key (MD5 %s, %s)", id, k.md5, k.sha256)
		}
	}
	for _, id := range []string{"SHA256:" + sha[1:], k.md5[3:], "SHA256:" + k.md5, "sha256:" + sha} {
		if k.matches(id) {
			t.Errorf("%q matches the key", id)
		}
	}
	if k.algorithm != "ed25519-sha512" {
		t.Errorf("algorithm %q", k.algorithm)
	}
}
