package cloud

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
	k, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimPrefix(k.SHA256, "SHA256:")
	for _, id := range []string{
		k.MD5, strings.ToUpper(k.MD5), strings.ReplaceAll(k.MD5, ":", ""), "MD5:" + k.MD5,
		k.SHA256, k.SHA256 + "=", " " + k.MD5 + " ",
	} {
		if !k.matches(id) {
			t.Errorf("%q does not match the key (MD5 %s, %s)", id, k.MD5, k.SHA256)
		}
	}
	for _, id := range []string{"SHA256:" + sha[1:], k.MD5[3:], "SHA256:" + k.MD5, "sha256:" + sha} {
		if k.matches(id) {
			t.Errorf("%q matches the key", id)
		}
	}
	if k.Algorithm != "ed25519-sha512" {
		t.Errorf("algorithm %q", k.Algorithm)
	}
}
