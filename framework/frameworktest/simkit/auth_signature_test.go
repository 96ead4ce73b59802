package simkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// cavageKey is the public key of draft-cavage-http-signatures-12,
// Appendix C; its fingerprints are what `ssh-keygen -l -E md5` and
// `-E sha256` print for it.
const (
	cavageKey = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDCFENGw33yGihy92pDjZQhl0C3
6rPJj+CvfSC8+q28hxA161QFNUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6
Z4UMR7EOcpfdUE9Hf3m/hs+FUR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJw
oYi+1hqp1fIekaxsyQIDAQAB
-----END PUBLIC KEY-----`
	cavageMD5    = "b4:fd:fa:e0:39:99:73:63:ca:8b:e0:fa:46:f3:f2:38"
	cavageSHA256 = "SHA256:ExiA/kCzfLSDlsIfB5h+g7Q3ym9F34KwQdv3jZWdxNI"
)

// TestHTTPSignatureSpecVectors verifies the signatures the draft's
// Appendix C gives for its test request, under keyIds in CloudAPI's form.
func TestHTTPSignatureSpecVectors(t *testing.T) {
	block, _ := pem.Decode([]byte(cavageKey))
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	date := "Sun, 05 Jan 2014 21:31:40 GMT"
	now, _ := http.ParseTime(date)
	v := NewHTTPSignature(SignatureOptions{Now: func() time.Time { return now }})
	md5, sha, err := v.AddKey("test", "", pub)
	if err != nil || md5 != cavageMD5 || sha != cavageSHA256 {
		t.Fatalf("AddKey = %q, %q, %v; want ssh-keygen's %q, %q", md5, sha, err, cavageMD5, cavageSHA256)
	}
	for name, tc := range map[string]struct{ headers, signature string }{
		"C.1 default": {"", "SjWJWbWN7i0wzBvtPl8rbASWz5xQW6mcJmn+ibttBqtifLN7Sazz6m79cNfwwb8DMJ5cou1s7uEGKKCs+FLEEaDV5lp7q25WqS+lavg7T8hc0GppauB6hbgEKTwblDHYGEtbGmtdHgVCk9SuS13F0hZ8FD0k/5OxEPXe5WozsbM="},
		"C.2 basic":   {`headers="(request-target) host date",`, "qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw3HMbe8VfEdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="},
	} {
		for _, fp := range []string{md5, "MD5:" + md5, sha, sha + "="} {
			r := httptest.NewRequest(http.MethodPost, "http://example.com/foo?param=value&pet=dog", strings.NewReader(`{"hello": "world"}`))
			r.Header.Set("Date", date)
			r.Header.Set("Authorization", fmt.Sprintf(`Signature keyId="/test/keys/%s",algorithm="rsa-sha256",%ssignature="%s"`, fp, tc.headers, tc.signature))
			if s, err := v.Verify(r); err != nil || s != (Signer{Account: "test", Fingerprint: cavageMD5}) {
				t.Errorf("%s, keyId by %s: %+v %v", name, fp, s, err)
			}
		}
	}
}

// signRequest signs req's Date (as triton-go does: headers="date") with
// key, following the draft with the standard library alone.
func signRequest(t *testing.T, req *http.Request, keyID, algorithm string, key crypto.Signer) {
	t.Helper()
	data := []byte("date: " + req.Header.Get("Date"))
	var sig []byte
	var err error
	switch k := key.(type) {
	case *rsa.PrivateKey:
		h := map[string]crypto.Hash{"rsa-sha1": crypto.SHA1, "rsa-sha256": crypto.SHA256, "rsa-sha512": crypto.SHA512}[algorithm]
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, h, digest(h, data))
	case *ecdsa.PrivateKey:
		h := map[string]crypto.Hash{"ecdsa-sha256": crypto.SHA256, "ecdsa-sha384": crypto.SHA384, "ecdsa-sha512": crypto.SHA512}[algorithm]
		sig, err = ecdsa.SignASN1(rand.Reader, k, digest(h, data))
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", fmt.Sprintf(`Signature keyId="%s",algorithm="%s",headers="date",signature="%s"`,
		keyID, algorithm, base64.StdEncoding.EncodeToString(sig)))
}

// TestHTTPSignatureKeys: RSA, ECDSA and Ed25519 keys of an account and of
// its sub-users sign real requests; the server checks them over HTTP.
func TestHTTPSignatureKeys(t *testing.T) {
	v := NewHTTPSignature(SignatureOptions{})
	kit := New(Options{Auth: func(r *http.Request) *Response {
		if _, err := v.Verify(r); err != nil {
			return &Response{Status: http.StatusUnauthorized, Body: map[string]string{"code": "InvalidSignature", "message": err.Error()}}
		}
		return nil
	}})
	mux := http.NewServeMux()
	kit.Handle(mux, "GET /{account}/machines", func(r *http.Request) Response {
		s, _ := v.Verify(r)
		return JSON(http.StatusOK, s)
	})
	l := NewListener(mux)
	StartForTest(t, &l)

	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		user, algorithm string
		key             crypto.Signer
	}{
		{"", "rsa-sha1", rsaKey}, {"", "rsa-sha256", rsaKey}, {"", "rsa-sha512", rsaKey},
		{"ops", "ecdsa-sha256", p256}, {"ops", "ecdsa-sha384", p384}, {"ops", "ecdsa-sha512", p521},
		{"", "ed25519-sha512", edKey}, {"ci", "ed25519-sha512", edKey},
	} {
		md5, sha, err := v.AddKey("acme", tc.user, tc.key.Public())
		if err != nil {
			t.Fatal(err)
		}
		for _, fp := range []string{md5, sha} {
			keyID := "/acme/keys/" + fp
			if tc.user != "" {
				keyID = "/acme/users/" + tc.user + "/keys/" + fp
			}
			req, _ := http.NewRequest(http.MethodGet, l.URL()+"/acme/machines", nil)
			req.Header.Set("Date", time.Now().UTC().Format(time.RFC1123)) // "… UTC", as triton-go sends it
			signRequest(t, req, keyID, tc.algorithm, tc.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s key of user %q, keyId %s: %d", tc.algorithm, tc.user, keyID, resp.StatusCode)
			}
		}
	}
}

// TestHTTPSignatureRejects: each way a signed request can be wrong.
func TestHTTPSignatureRejects(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	v := NewHTTPSignature(SignatureOptions{Now: func() time.Time { return now }})
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	fp, _, _ := v.AddKey("acme", "", key.Public())
	edFP, _, _ := v.AddKey("acme", "", edKey.Public())
	userFP, _, _ := v.AddKey("acme", "ops", other.Public())

	request := func(date time.Time, keyID, algorithm string, k crypto.Signer) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/acme/machines", nil)
		r.Header.Set("Date", date.Format(http.TimeFormat))
		signRequest(t, r, keyID, algorithm, k)
		return r
	}
	ok := request(now, "/acme/keys/"+fp, "rsa-sha256", key)
	if _, err := v.Verify(ok); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	tampered := request(now, "/acme/keys/"+fp, "rsa-sha256", key)
	tampered.Header.Set("Date", now.Add(time.Second).Format(http.TimeFormat))
	noDate := request(now, "/acme/keys/"+fp, "rsa-sha256", key)
	noDate.Header.Del("Date")
	headersWithoutDate := request(now, "/acme/keys/"+fp, "rsa-sha256", key)
	headersWithoutDate.Header.Set("Authorization", strings.Replace(headersWithoutDate.Header.Get("Authorization"), `headers="date"`, `headers="(request-target)"`, 1))
	bearer := httptest.NewRequest(http.MethodGet, "/acme/machines", nil)
	bearer.Header.Set("Authorization", "Bearer x")
	garbled := request(now, "/acme/keys/"+fp, "rsa-sha256", key)
	garbled.Header.Set("Authorization", `Signature keyId="/acme/keys/`+fp+`",algorithm="rsa-sha256",signature=`)
	for name, tc := range map[string]struct {
		r    *http.Request
		want error
	}{
		"date 6 minutes old":        {request(now.Add(-6*time.Minute), "/acme/keys/"+fp, "rsa-sha256", key), ErrClockSkew},
		"date 6 minutes ahead":      {request(now.Add(6*time.Minute), "/acme/keys/"+fp, "rsa-sha256", key), ErrClockSkew},
		"no date":                   {noDate, ErrClockSkew},
		"date not signed":           {headersWithoutDate, ErrMalformedSignature},
		"date changed after":        {tampered, ErrBadSignature},
		"signed by another key":     {request(now, "/acme/keys/"+fp, "rsa-sha256", other), ErrBadSignature},
		"algorithm not the key's":   {request(now, "/acme/keys/"+edFP, "rsa-sha256", key), ErrBadSignature},
		"unknown fingerprint":       {request(now, "/acme/keys/00:11:22", "rsa-sha256", key), ErrUnknownKey},
		"another account's keyId":   {request(now, "/other/keys/"+fp, "rsa-sha256", key), ErrUnknownKey},
		"a user's key, as account":  {request(now, "/acme/keys/"+userFP, "rsa-sha256", other), ErrUnknownKey},
		"the account's key, as ops": {request(now, "/acme/users/ops/keys/"+fp, "rsa-sha256", key), ErrUnknownKey},
		"keyId not a path":          {request(now, fp, "rsa-sha256", key), ErrMalformedSignature},
		"bearer token":              {bearer, ErrNoSignature},
		"unterminated parameter":    {garbled, ErrMalformedSignature},
	} {
		if _, err := v.Verify(tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	v.RemoveKey("acme", "", fp)
	if _, err := v.Verify(ok); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a removed key: %v", err)
	}
}

// TestHTTPSignaturePublicKeys checks that PublicKeys lists exactly the keys
// of the owner asked for, as added, and forgets a removed one.
func TestHTTPSignaturePublicKeys(t *testing.T) {
	v := NewHTTPSignature(SignatureOptions{})
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	userKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecFP, _, _ := v.AddKey("acme", "", ec.Public())
	if _, _, err := v.AddKey("acme", "", edPub); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.AddKey("acme", "ops", userKey.Public()); err != nil {
		t.Fatal(err)
	}
	got := v.PublicKeys("acme", "")
	if len(got) != 2 || !ec.PublicKey.Equal(got[0]) || !edPub.Equal(got[1]) {
		t.Fatalf("the account's keys: %v", got)
	}
	if users := v.PublicKeys("acme", "ops"); len(users) != 1 || !userKey.PublicKey.Equal(users[0]) {
		t.Fatalf("ops's keys: %v", users)
	}
	if other := v.PublicKeys("other", ""); len(other) != 0 {
		t.Fatalf("another account's keys: %v", other)
	}
	v.RemoveKey("acme", "", ecFP)
	if got := v.PublicKeys("acme", ""); len(got) != 1 || !edPub.Equal(got[0]) {
		t.Fatalf("after removing the ECDSA key: %v", got)
	}
}
