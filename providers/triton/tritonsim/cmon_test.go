package tritonsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/md5"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
)

// cmonCert describes a client certificate to mint.
type cmonCert struct {
	login     string        // subject CN
	issuerCN  string        // "" means the signer's "MD5:<base64>" fingerprint
	signer    crypto.Signer // signs the certificate; nil means the leaf key (self-signed)
	leaf      crypto.Signer // the certificate's own key; nil means a new ECDSA P-256 key
	notBefore time.Time     // zero means an hour ago
	notAfter  time.Time     // zero means a day from now
	noPurpose bool          // leave joyentCmon out of the extended key usages
}

// mint makes the certificate as node-triton's `triton profile cmon-certgen`
// does: subject CN=<login>, issuer CN=<signer's MD5 fingerprint, sshpk's
// base64 form>, purposes signature, identity, clientAuth and joyentCmon.
func (c cmonCert) mint(t *testing.T) *tls.Certificate {
	t.Helper()
	leaf := c.leaf
	if leaf == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		leaf = k
	}
	signer := c.signer
	if signer == nil {
		signer = leaf
	}
	issuerCN := c.issuerCN
	if issuerCN == "" {
		issuerCN = "MD5:" + base64.RawStdEncoding.EncodeToString(testMD5(t, signer.Public()))
	}
	if c.signer == nil {
		issuerCN = c.login
	}
	notBefore, notAfter := c.notBefore, c.notAfter
	if notBefore.IsZero() {
		notBefore = time.Now().Add(-time.Hour)
	}
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: c.login},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if !c.noPurpose {
		tmpl.UnknownExtKeyUsage = []asn1.ObjectIdentifier{OIDJoyentCMON}
	}
	parent := &x509.Certificate{Subject: pkix.Name{CommonName: issuerCN}}
	if c.signer == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, leaf.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: leaf}
}

func testMD5(t *testing.T, pub crypto.PublicKey) []byte {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(k.Marshal())
	return sum[:]
}

// cmonGet is a GET of CMON over real TLS, trusting only CMONCAPEM and
// presenting cert when it is not nil; it returns the status and decodes
// the JSON body into out.
func cmonGet(t *testing.T, s *Server, cert *tls.Certificate, path string, out any) int {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.CMONCAPEM()) {
		t.Fatal("CMONCAPEM holds no certificate")
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	t.Cleanup(client.CloseIdleConnections)
	req, err := http.NewRequestWithContext(ctx(), http.MethodGet, s.CMONURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %d with a body that is not JSON: %v", path, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// discovered is GET /v1/discover's body.
type discovered struct {
	Containers []struct {
		VMUUID      string   `json:"vm_uuid"`
		VMAlias     string   `json:"vm_alias"`
		VMImageUUID string   `json:"vm_image_uuid"`
		VMBrand     string   `json:"vm_brand"`
		ServerUUID  string   `json:"server_uuid"`
		Groups      []string `json:"groups"`
	} `json:"containers"`
}

func (d discovered) aliases() []string {
	var out []string
	for _, c := range d.Containers {
		out = append(out, c.VMAlias)
	}
	slices.Sort(out)
	return out
}

func TestCMONDiscover(t *testing.T) {
	s, c := setup(t, Options{})
	w1 := s.AddMachine(Machine{Name: "w1", Tags: map[string]any{"triton.cmon.groups": "k8s-c1"}})
	s.AddMachine(Machine{Name: "w2", Tags: map[string]any{"triton.cmon.groups": "web,k8s-c1"}})
	s.AddMachine(Machine{Name: "w3", State: StateStopped, Tags: map[string]any{"triton.cmon.groups": "k8s-c1"}})
	s.AddMachine(Machine{Name: "web", Tags: map[string]any{"triton.cmon.groups": "web"}})
	s.AddMachine(Machine{Name: "plain"})
	cert := cmonCert{login: s.Account(), signer: s.AccountKey()}.mint(t)

	var d discovered
	if code := cmonGet(t, s, cert, "/v1/discover?groups=k8s-c1", &d); code != http.StatusOK {
		t.Fatalf("discover: %d", code)
	}
	if got := d.aliases(); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Fatalf("group k8s-c1 lists %v, want the running w1 and w2", got)
	}
	for _, m := range d.Containers {
		if m.VMAlias == "w1" && (m.VMUUID != w1.ID || m.ServerUUID != w1.ComputeNode || m.VMImageUUID != w1.Image ||
			m.VMBrand != w1.Brand || !slices.Equal(m.Groups, []string{"k8s-c1"})) {
			t.Fatalf("w1 is listed as %+v, the machine is %+v", m, w1)
		}
	}
	for path, want := range map[string][]string{
		"/v1/discover":                    {"plain", "w1", "w2", "web"},
		"/v1/discover?groups=web,k8s-c1":  {"w1", "w2", "web"},
		"/v1/discover?groups=nobody-else": nil,
	} {
		var d discovered
		if code := cmonGet(t, s, cert, path, &d); code != http.StatusOK || !slices.Equal(d.aliases(), want) {
			t.Errorf("%s: %d %v, want %v", path, code, d.aliases(), want)
		}
	}
	var fail struct{ Code, Message string }
	if code := cmonGet(t, s, cert, "/v1/discover?groups=a%20b", &fail); code != http.StatusBadRequest || fail.Code != "BadRequest" {
		t.Errorf("an invalid group: %d %+v, want 400 BadRequest", code, fail)
	}
	if code := cmonGet(t, s, cert, "/v1/gz/discover", &fail); code != http.StatusForbidden {
		t.Errorf("gz discover as a customer: %d %+v, want 403", code, fail)
	}

	services, err := c.compute.Services().List(ctx(), &compute.ListServicesInput{})
	if err != nil {
		t.Fatal(err)
	}
	endpoints := map[string]string{}
	for _, svc := range services {
		endpoints[svc.Name] = svc.Endpoint
	}
	if endpoints["cmon"] != s.CMONURL() || endpoints["cloudapi"] != s.URL() {
		t.Fatalf("services %v, want cmon at %s", endpoints, s.CMONURL())
	}
}

// TestCMONAuthentication checks which certificates CMON takes: new-style
// ones signed by an account key (RSA, ECDSA or Ed25519) that its issuer
// names, and old-style self-signed ones of an account key, expired or not.
func TestCMONAuthentication(t *testing.T) {
	s := NewServer(t, Options{})
	s.AddMachine(Machine{Name: "w1"})
	acct := s.Account()
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, k := range []crypto.Signer{ecKey, edKey} {
		if _, _, err := s.AddKey(acct, "", k.Public()); err != nil {
			t.Fatal(err)
		}
	}
	accountMD5 := testMD5(t, s.AccountKey().Public())
	past := time.Now().Add(-48 * time.Hour)

	for name, tc := range map[string]struct {
		cert cmonCert
		want int
	}{
		"new style, RSA account key":     {cmonCert{login: acct, signer: s.AccountKey()}, http.StatusOK},
		"new style, ECDSA account key":   {cmonCert{login: acct, signer: ecKey}, http.StatusOK},
		"new style, Ed25519 account key": {cmonCert{login: acct, signer: edKey}, http.StatusOK},
		"issuer as colon hex":            {cmonCert{login: acct, signer: s.AccountKey(), issuerCN: s.KeyFingerprint()}, http.StatusOK},
		"issuer padded base64":           {cmonCert{login: acct, signer: s.AccountKey(), issuerCN: "MD5:" + base64.StdEncoding.EncodeToString(accountMD5)}, http.StatusOK},
		"old style, expired":             {cmonCert{login: acct, leaf: s.AccountKey(), noPurpose: true, notBefore: past, notAfter: past.Add(time.Hour)}, http.StatusOK},
		"old style, ECDSA key":           {cmonCert{login: acct, leaf: ecKey, noPurpose: true}, http.StatusOK},

		"expired":                       {cmonCert{login: acct, signer: s.AccountKey(), notBefore: past, notAfter: past.Add(time.Hour)}, http.StatusUnauthorized},
		"not valid yet":                 {cmonCert{login: acct, signer: s.AccountKey(), notBefore: time.Now().Add(time.Hour)}, http.StatusUnauthorized},
		"issuer names another key":      {cmonCert{login: acct, signer: s.AccountKey(), issuerCN: "MD5:" + base64.RawStdEncoding.EncodeToString(testMD5(t, ecKey.Public()))}, http.StatusUnauthorized},
		"issuer base64 without MD5:":    {cmonCert{login: acct, signer: s.AccountKey(), issuerCN: base64.StdEncoding.EncodeToString(accountMD5)}, http.StatusUnauthorized},
		"issuer a SHA256 fingerprint":   {cmonCert{login: acct, signer: s.AccountKey(), issuerCN: s.KeyFingerprintSHA256()}, http.StatusUnauthorized},
		"signed by a key not the named": {cmonCert{login: acct, signer: stranger, issuerCN: "MD5:" + base64.RawStdEncoding.EncodeToString(accountMD5)}, http.StatusUnauthorized},
		"signed by a stranger's key":    {cmonCert{login: acct, signer: stranger}, http.StatusUnauthorized},
		"without the joyentCmon usage":  {cmonCert{login: acct, signer: s.AccountKey(), noPurpose: true}, http.StatusUnauthorized},
		"another login":                 {cmonCert{login: "someone-else", signer: s.AccountKey()}, http.StatusUnauthorized},
		"old style, a stranger's key":   {cmonCert{login: acct, leaf: stranger, noPurpose: true}, http.StatusUnauthorized},
	} {
		var body struct{ Code, Message string }
		code := cmonGet(t, s, tc.cert.mint(t), "/v1/discover", &body)
		if code != tc.want || code != http.StatusOK && body.Code != "Unauthorized" {
			t.Errorf("%s: %d %+v, want %d", name, code, body, tc.want)
		}
	}
	var body struct{ Code, Message string }
	for _, path := range []string{"/v1/discover", "/v1/gz/discover"} {
		if code := cmonGet(t, s, nil, path, &body); code != http.StatusUnauthorized || body.Code != "Unauthorized" {
			t.Errorf("%s without a client certificate: %d %+v, want 401 Unauthorized", path, code, body)
		}
	}
	s.RemoveKey(acct, "", s.KeyFingerprint())
	if code := cmonGet(t, s, cmonCert{login: acct, signer: s.AccountKey()}.mint(t), "/v1/discover", &body); code != http.StatusUnauthorized {
		t.Errorf("signed by a removed key: %d %+v, want 401", code, body)
	}
}

// TestServeCompanions: a program that mounts Handler on a listener of its
// own (cmd/cloudsim) starts CMON with ServeCompanions; CloudAPI's services
// list (cmon) and Env (TRITON_CMON_URL, TRITON_CMON_CA_FILE, which
// WriteKeyFile writes) then name a CMON that answers, as the provider's
// metrics controller reads them (providers/triton/cmon_config.go).
func TestServeCompanions(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "acct.pem")
	s := New(Options{KeyFile: keyFile})
	api := httptest.NewServer(s.Handler())
	t.Cleanup(api.Close)
	if _, set := s.Env(api.URL)["TRITON_CMON_URL"]; set || s.CMONURL() != "" {
		t.Fatalf("CMON advertised before it is served: %q, %v", s.CMONURL(), s.Env(api.URL))
	}
	stop, err := s.ServeCompanions()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if err := s.WriteKeyFile(); err != nil {
		t.Fatal(err)
	}
	env := s.Env(api.URL)
	caFile := strings.TrimSuffix(keyFile, ".pem") + "-cmon-ca.pem"
	if env["TRITON_CMON_URL"] != s.CMONURL() || !strings.HasPrefix(s.CMONURL(), "https://localhost:") || env["TRITON_CMON_CA_FILE"] != caFile {
		t.Fatalf("env %v, CMON at %q", env, s.CMONURL())
	}
	if ca, err := os.ReadFile(caFile); err != nil || string(ca) != string(s.CMONCAPEM()) {
		t.Fatalf("CA file %s: %v", caFile, err)
	}
	cc := computeAt(t, api.URL, s)
	services, err := cc.Services().List(ctx(), &compute.ListServicesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(services) != 2 || services[1].Name != "cmon" || services[1].Endpoint != s.CMONURL() {
		t.Fatalf("services %+v, want cmon at %s", services, s.CMONURL())
	}
	cert := cmonCert{login: s.Account(), signer: s.AccountKey()}.mint(t)
	var d discovered
	if code := cmonGet(t, s, cert, "/v1/discover", &d); code != http.StatusOK {
		t.Fatalf("discover: %d", code)
	}

	url := s.CMONURL()
	again, err := s.ServeCompanions()
	if err != nil {
		t.Fatal(err)
	}
	again() // it started nothing: CMON stays
	if s.CMONURL() != url || cmonGet(t, s, cert, "/v1/discover", &d) != http.StatusOK {
		t.Fatal("a second ServeCompanions' stop closed CMON")
	}
	stop()
	if s.CMONURL() != "" {
		t.Fatalf("CMON still advertised at %s after stop", s.CMONURL())
	}
}

// computeAt is a triton-go compute client for s's account at url.
func computeAt(t *testing.T, url string, s *Server) *compute.ComputeClient {
	t.Helper()
	cc, err := compute.NewClient(&triton.ClientConfig{TritonURL: url, AccountName: s.Account(), Signers: []authentication.Signer{signerOf(t, s)}})
	if err != nil {
		t.Fatal(err)
	}
	return cc
}
