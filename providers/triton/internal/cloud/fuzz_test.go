package cloud

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzKeyMaterial gives NewSigner, the parser TRITON_KEY_MATERIAL goes
// through, fuzzed key text (seeded with every form and type the provider
// reads, and encrypted ones) and key IDs: never a panic, no error quoting
// the key, and a key it accepts signs a request. Material without a BEGIN
// line would be a path, which the fuzzer must not read: it goes to
// ParsePrivateKey directly.
func FuzzKeyMaterial(f *testing.F) {
	for _, k := range fuzzKeys(f) {
		f.Add(k, "")
		f.Add(k, "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU")
		f.Add(strings.Replace(k, "A", "B", 3), "MD5:00:11:22")
		f.Add(k[:len(k)/2], "")
	}
	f.Add("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n", "")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\nAAAA\n-----END RSA PRIVATE KEY-----\n", "")
	f.Add("-----BEGIN DSA PRIVATE KEY-----\nMIIBuwIBAAKBgQ==\n-----END DSA PRIVATE KEY-----\n", "")
	f.Fuzz(func(t *testing.T, material, keyID string) {
		var err error
		if strings.Contains(material, "-----BEGIN") {
			var s *Signer
			s, err = NewSigner(&Credentials{Account: "ops", KeyID: keyID, KeyMaterial: config.NewSecret(material)})
			if err == nil {
				if _, err := s.Sign("Wed, 25 Nov 2026 08:00:00 GMT", false); err != nil {
					t.Errorf("a key NewSigner accepted does not sign: %v", err)
				}
			}
		} else {
			_, err = ParsePrivateKey([]byte(material))
		}
		fuzzkit.NoSecret(t, err, keyLines(material)...)
	})
}

// keyLines are the lines of key text that carry key bytes: none may
// appear in an error.
func keyLines(material string) []string {
	var out []string
	for line := range strings.Lines(material) {
		line = strings.TrimSpace(line)
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") && !strings.Contains(line, ": ") {
			out = append(out, line)
		}
	}
	return out
}

// fuzzKeys returns fresh keys of every type in every form the provider
// reads: RSA (PKCS#1, PKCS#8, OpenSSH), ECDSA P-256, P-384 and P-521
// (SEC1, PKCS#8, OpenSSH) and Ed25519 (PKCS#8, OpenSSH).
func fuzzKeys(f *testing.F) []string {
	var keys []string
	add := func(typ string, der []byte, err error) {
		if err != nil {
			f.Fatal(err)
		}
		keys = append(keys, string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})))
	}
	addOpenSSH := func(k crypto.PrivateKey) {
		b, err := ssh.MarshalPrivateKey(k, "fuzz")
		if err != nil {
			f.Fatal(err)
		}
		keys = append(keys, string(pem.EncodeToMemory(b)))
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	add("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil)
	der, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	add("PRIVATE KEY", der, err)
	addOpenSSH(rsaKey)
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			f.Fatal(err)
		}
		der, err := x509.MarshalECPrivateKey(k)
		add("EC PRIVATE KEY", der, err)
		der, err = x509.MarshalPKCS8PrivateKey(k)
		add("PRIVATE KEY", der, err)
		addOpenSSH(k)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	der, err = x509.MarshalPKCS8PrivateKey(edKey)
	add("PRIVATE KEY", der, err)
	addOpenSSH(edKey)
	return keys
}
