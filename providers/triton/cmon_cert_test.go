package triton

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// md5Base64 turns a colon-hex MD5 fingerprint into sshpk's base64 form.
func md5Base64(t *testing.T, colonHex string) string {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimPrefix(colonHex, "MD5:"), ":", ""))
	if err != nil {
		t.Fatal(err)
	}
	return "MD5:" + strings.TrimRight(base64.StdEncoding.EncodeToString(b), "=")
}

// The issuer's CN is the account key's MD5 fingerprint as sshpk's
// fingerprint('md5').toString('base64') writes it, which CMON parses: for
// the simulator's key, whose `ssh-keygen -l -E md5` is
// de:49:75:6f:51:9b:e2:d6:41:0f:1c:e5:22:f7:31:ce.
func TestSSHPKMD5(t *testing.T) {
	k, err := cloud.ParsePrivateKey(tritonsim.New(tritonsim.Options{}).AccountKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(k.Signer.Public())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sshpkMD5(pub), "MD5:3kl1b1Gb4tZBDxzlIvcxzg"; got != want {
		t.Errorf("sshpkMD5 = %q, want %q", got, want)
	}
}

// Every account key type CloudAPI takes signs a certificate CMON (the
// simulator, which checks as CMON's lib/common.js does) takes, and that
// checkCMONCert finds serving.
func TestCMONCertKeyTypes(t *testing.T) {
	f := newCMONFixture(t, nil)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	for name, key := range map[string]crypto.Signer{"rsa": rsaKey, "ecdsa-p256": p256, "ecdsa-p384": p384, "ed25519": edKey} {
		t.Run(name, func(t *testing.T) {
			der, err := x509.MarshalPKCS8PrivateKey(key)
			if err != nil {
				t.Fatal(err)
			}
			k, err := cloud.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			pair, err := mintCMONCert(k, tritonsim.DefaultAccount, now, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if v := checkCMONCert(pair.cert, pair.key, k, tritonsim.DefaultAccount, now, time.Hour, 20*time.Minute); v.renew != "" {
				t.Errorf("a fresh certificate needs renewal: %s", v.renew)
			}
			s := &corev1.Secret{Data: map[string][]byte{corev1.TLSCertKey: pair.cert, corev1.TLSPrivateKeyKey: pair.key}}
			if status, _ := discoverAs(t, f, s, "k8s"); status != http.StatusUnauthorized {
				t.Fatalf("CMON answered %d to a certificate signed by a key not the account's", status)
			}
			if _, _, err := f.sim.AddKey(tritonsim.DefaultAccount, "", key.Public()); err != nil {
				t.Fatal(err)
			}
			if status, _ := discoverAs(t, f, s, "k8s"); status != http.StatusOK {
				t.Errorf("CMON answered %d to the certificate", status)
			}
		})
	}
}

// checkCMONCert says why a Secret's certificate needs replacing.
func TestCheckCMONCert(t *testing.T) {
	k, err := cloud.ParsePrivateKey(tritonsim.New(tritonsim.Options{}).AccountKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherDER, _ := x509.MarshalPKCS8PrivateKey(otherKey)
	other, _ := cloud.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: otherDER}))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	good, _ := mintCMONCert(k, "acct", now, 30*24*time.Hour)
	byOther, _ := mintCMONCert(other, "acct", now, 30*24*time.Hour)
	second, _ := mintCMONCert(k, "acct", now, 30*24*time.Hour)
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name      string
		cert, key []byte
		login     string
		at        time.Time
		validity  time.Duration
		want      string
	}{
		{"serves", good.cert, good.key, "acct", now.Add(day), 30 * day, ""},
		{"due", good.cert, good.key, "acct", now.Add(21 * day), 30 * day, "less than"},
		{"validity shortened", good.cert, good.key, "acct", now, 7 * day, "beyond the validity"},
		{"another account", good.cert, good.key, "acct2", now, 30 * day, "subject"},
		{"signed by another key", byOther.cert, byOther.key, "acct", now, 30 * day, "issuer"},
		{"not a pair", good.cert, second.key, "acct", now, 30 * day, "not a certificate and its key"},
		{"garbage", []byte("x"), []byte("y"), "acct", now, 30 * day, "not a certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := checkCMONCert(tc.cert, tc.key, k, tc.login, tc.at, tc.validity, 10*day)
			if tc.want == "" && v.renew != "" || !strings.Contains(v.renew, tc.want) {
				t.Errorf("renew %q, want %q", v.renew, tc.want)
			}
			if strings.Contains(v.renew, "PRIVATE KEY") {
				t.Error("the reason quotes a key")
			}
		})
	}
}
