package ranchersim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
)

// selfSigned is a PEM certificate for cn and dnsNames, and its key.
func selfSigned(t *testing.T, cn string, dnsNames ...string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

func TestCertificateLifecycle(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	cert, key := selfSigned(t, "example.com", "example.com", "www.example.com")
	created, err := c.Certificate.Create(&rancher.Certificate{Name: "example-com", Cert: cert, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Id, "1c") || created.State != StateActivating || created.Key != key {
		t.Errorf("created = %s %s, key answered %v", created.Id, created.State, created.Key == key)
	}
	got, err := c.Certificate.ById(created.Id)
	if err != nil || got == nil {
		t.Fatalf("ById = %v, %v", got, err)
	}
	want := rancher.Certificate{CN: "example.com", SubjectAlternativeNames: []string{"example.com", "www.example.com"},
		Issuer: "example.com", ExpiresAt: "2027-01-01T00:00:00Z", IssuedAt: "2026-01-01T00:00:00Z",
		Algorithm: "ECDSA-SHA256", KeySize: 256, SerialNumber: "4242", Version: "3", State: StateActive}
	if got.CN != want.CN || !slices.Equal(got.SubjectAlternativeNames, want.SubjectAlternativeNames) ||
		got.Issuer != want.Issuer || got.ExpiresAt != want.ExpiresAt || got.IssuedAt != want.IssuedAt ||
		got.Algorithm != want.Algorithm || got.KeySize != want.KeySize || got.SerialNumber != want.SerialNumber ||
		got.Version != want.Version || got.State != want.State || got.Cert != cert || got.Key != "" ||
		len(got.CertFingerprint) != 59 {
		t.Errorf("certificate = %+v, want the details of %+v, no key", got, want)
	}
	_, err = c.Certificate.Update(got, map[string]any{"cert": "not a PEM", "name": "renamed"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidFormat", "fieldName=cert")
	newCert, newKey := selfSigned(t, "example.org")
	if _, err := c.Certificate.Update(got, map[string]any{"cert": newCert, "key": newKey}); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.Certificate(created.Id); held.Name != "example-com" || held.CN != "example.org" || held.Key != newKey {
		t.Errorf("after a refused and an accepted PUT: %s %s", held.Name, held.CN)
	}
	list, err := c.Certificate.List(filters("name", "example-com"))
	if err != nil || len(list.Data) != 1 || list.Data[0].Id != created.Id {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := c.Certificate.Delete(got); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if held, _ := s.Certificate(created.Id); held.State != StateRemoved || held.Removed == nil {
		t.Errorf("after DELETE: %s, removed %v", held.State, held.Removed)
	}
	if left, _ := c.Certificate.List(filters("removed_null", "1")); len(left.Data) != 0 {
		t.Errorf("live certificates after DELETE: %+v", left.Data)
	}
}

func TestCertificateRefused(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	cert, key := selfSigned(t, "a.example")
	otherCert, otherKey := selfSigned(t, "b.example")
	if _, err := c.Certificate.Create(&rancher.Certificate{Name: "a", Cert: cert, Key: key}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   rancher.Certificate
		want []string
	}{
		{rancher.Certificate{Cert: otherCert, Key: otherKey}, []string{"code=MissingRequired", "fieldName=name"}},
		{rancher.Certificate{Name: "a", Cert: otherCert, Key: otherKey}, []string{"code=NotUnique", "fieldName=name"}},
		{rancher.Certificate{Name: "b", Key: otherKey}, []string{"code=MissingRequired", "fieldName=cert"}},
		{rancher.Certificate{Name: "b", Cert: otherCert}, []string{"code=MissingRequired", "fieldName=key"}},
		{rancher.Certificate{Name: "b", Cert: "not a PEM", Key: otherKey}, []string{"code=InvalidFormat", "fieldName=cert"}},
		{rancher.Certificate{Name: "b", Cert: otherKey, Key: otherKey}, []string{"code=InvalidFormat", "fieldName=cert"}},
		{rancher.Certificate{Name: "b", Cert: otherCert, Key: "garbage"}, []string{"code=InvalidFormat", "fieldName=key"}},
		{rancher.Certificate{Name: "b", Cert: otherCert, Key: key}, []string{"code=InvalidFormat", "fieldName=key"}},
		{rancher.Certificate{Name: "b", Cert: otherCert, Key: otherKey, CertChain: "junk"}, []string{"code=InvalidFormat", "fieldName=certChain"}},
	} {
		_, err := c.Certificate.Create(&tc.in)
		wantAPIError(t, err, http.StatusUnprocessableEntity, tc.want...)
	}
	if n := len(s.Certificates()); n != 1 {
		t.Errorf("the cloud holds %d certificates after the refusals, want 1", n)
	}
}

func TestLoadBalancerCertificateReferences(t *testing.T) {
	s, c, k := lbSetup(t)
	cert, key := selfSigned(t, "example.com")
	held := s.AddCertificate(Certificate{ID: "1c77", Name: "example-com", Cert: cert, Key: key})
	ext, err := c.ExternalService.Create(&rancher.ExternalService{Name: "nodes", StackId: k.Id, ExternalIpAddresses: []string{"10.0.0.11"}})
	if err != nil {
		t.Fatal(err)
	}
	withCerts := func(name, def string, others ...string) *rancher.LoadBalancerService {
		lb := globalLB(k.Id, name, "443:443/tcp")
		lb.LbConfig = &rancher.LbConfig{DefaultCertificateId: def, CertificateIds: others,
			PortRules: []rancher.PortRule{{SourcePort: 443, TargetPort: 31443, Protocol: "https", ServiceId: ext.Id}}}
		return lb
	}
	lb, err := c.LoadBalancerService.Create(withCerts("lb-ok", held.ID, held.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Service(lb.Id); got.LBConfig.DefaultCertificateID != held.ID || !slices.Equal(got.LBConfig.CertificateIDs, []string{held.ID}) {
		t.Errorf("the cloud holds lbConfig %+v", got.LBConfig)
	}
	_, err = c.LoadBalancerService.Create(withCerts("lb-missing", "1c999"))
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=defaultCertificateId")
	_, err = c.LoadBalancerService.Create(withCerts("lb-missing-sni", held.ID, "1c999"))
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=certificateIds")
	doc, err := c.Certificate.ById(held.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Certificate.ActionRemove(doc); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadBalancerService.Create(withCerts("lb-removed", held.ID))
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=defaultCertificateId")
	if _, ok := s.ServiceByName("lb-missing"); ok {
		t.Error("a refused load balancer was created")
	}
}

func TestScenarioCertificates(t *testing.T) {
	cert, key := selfSigned(t, "example.com")
	indent := func(s string) string { return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }
	yaml := "certificates:\n- name: example-com\n  id: 1c5\n  cert: |\n" + indent(cert) + "\n  key: |\n" + indent(key) + `
stacks: [{name: lbs}]
services:
- {name: lb, stack: lbs, launchConfig: {ports: ["443:443/tcp"]}, lbConfig: {defaultCertificateId: example-com, portRules: [{sourcePort: 443, protocol: https}]}}
`
	s, err := NewFromScenario([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Certificate("1c5"); !ok || got.CN != "example.com" || got.State != StateActive {
		t.Errorf("certificate 1c5 = %+v, %v", got, ok)
	}
	if lb, _ := s.ServiceByName("lb"); lb.LBConfig.DefaultCertificateID != "1c5" {
		t.Errorf("the LB's default certificate = %q, want 1c5", lb.LBConfig.DefaultCertificateID)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"certificates: [{name: x, cert: nope, key: nope}]", "certificates[0].cert"},
		{"stacks: [{name: s}]\nservices: [{name: x, stack: s, lbConfig: {certificateIds: [zz]}}]", "no certificate \"zz\""},
	} {
		if _, err := LoadScenario([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one about %q", tc.yaml, err, tc.want)
		}
	}
}
