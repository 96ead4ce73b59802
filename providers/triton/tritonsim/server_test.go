package tritonsim

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	"golang.org/x/crypto/ssh"
)

func TestAccountAndPing(t *testing.T) {
	s, c := setup(t, Options{})
	a, err := c.account.Get(ctx(), &account.GetInput{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Login != DefaultAccount || a.ID != s.AccountID() || !a.TritonCNSEnabled || a.Created.IsZero() {
		t.Fatalf("account %+v", a)
	}
	s.SetCNSEnabled(false)
	if a, err = c.account.Get(ctx(), &account.GetInput{}); err != nil || a.TritonCNSEnabled {
		t.Fatalf("after SetCNSEnabled(false): %+v, %v", a, err)
	}

	resp := get(t, s.URL()+"/--ping")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Triton-Datacenter-Name") != DefaultDatacenter {
		t.Fatalf("ping: %d %v", resp.StatusCode, resp.Header)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body["ping"] != "pong" {
		t.Fatalf("ping body %v, %v", body, err)
	}
	if resp := get(t, s.URL()+"/"+DefaultAccount); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned GET /%s = %d, want 401", DefaultAccount, resp.StatusCode)
	}
}

func TestCatalog(t *testing.T) {
	s, c := setup(t, Options{})
	dcs, err := c.compute.Datacenters().List(ctx(), &compute.ListDataCentersInput{})
	if err != nil || len(dcs) != 1 || dcs[0].Name != DefaultDatacenter || dcs[0].URL != s.URL() {
		t.Fatalf("datacenters %+v, %v", dcs, err)
	}
	pkgs, err := c.compute.Packages().List(ctx(), &compute.ListPackagesInput{Name: "g4-highcpu-2G"})
	if err != nil || len(pkgs) != 1 || pkgs[0].Memory != 2048 {
		t.Fatalf("packages %+v, %v", pkgs, err)
	}
	p, err := c.compute.Packages().Get(ctx(), &compute.GetPackageInput{ID: pkgs[0].ID})
	if err != nil || p.Name != "g4-highcpu-2G" {
		t.Fatalf("package %+v, %v", p, err)
	}
	imgs, err := c.compute.Images().List(ctx(), &compute.ListImagesInput{Name: LoadBalancerImage})
	if err != nil || len(imgs) != 1 || imgs[0].State != "active" {
		t.Fatalf("images %+v, %v", imgs, err)
	}
	if _, err := c.compute.Images().Get(ctx(), &compute.GetImageInput{ImageID: imgs[0].ID}); err != nil {
		t.Fatal(err)
	}
	svcs, err := c.compute.Services().List(ctx(), &compute.ListServicesInput{})
	if err != nil || len(svcs) != 2 || svcs[0].Name != "cloudapi" || svcs[1].Name != "cmon" {
		t.Fatalf("services %+v, %v", svcs, err)
	}

	nets, err := c.network.List(ctx(), &network.ListInput{})
	if err != nil || len(nets) != 2 || !nets[0].Public || nets[0].Name != PublicNetworkName || !nets[1].Fabric {
		t.Fatalf("networks %+v, %v", nets, err)
	}
	if n, err := c.network.Get(ctx(), &network.GetInput{ID: nets[1].Id}); err != nil || n.Subnet != nets[1].Subnet {
		t.Fatalf("network %+v, %v", n, err)
	}
	vlans, err := c.network.Fabrics().ListVLANs(ctx(), &network.ListVLANsInput{})
	if err != nil || len(vlans) != 1 {
		t.Fatalf("vlans %+v, %v", vlans, err)
	}
	fabrics, err := c.network.Fabrics().List(ctx(), &network.ListFabricsInput{FabricVLANID: vlans[0].ID})
	if err != nil || len(fabrics) != 1 || fabrics[0].Name != FabricNetworkName {
		t.Fatalf("fabric networks %+v, %v", fabrics, err)
	}
}

func TestNoLoadBalancerImage(t *testing.T) {
	_, c := setup(t, Options{NoLoadBalancerImage: true})
	imgs, err := c.compute.Images().List(ctx(), &compute.ListImagesInput{Name: LoadBalancerImage})
	if err != nil || len(imgs) != 0 {
		t.Fatalf("images %+v, %v", imgs, err)
	}
}

func TestSignatureRefused(t *testing.T) {
	s := NewServer(t, Options{})
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	c := connectWith(t, s, rsaSigner(t, other, s.Account(), ""))
	_, err = c.account.Get(ctx(), &account.GetInput{})
	wantAPIError(t, err, http.StatusUnauthorized, "InvalidCredentials")

	own := rsaSigner(t, s.AccountKey(), s.Account(), "")
	now := time.Now().UTC()
	for name, dates := range map[string][2]time.Time{
		"tampered date": {now, now.Add(time.Second)},
		"skewed date":   {now.Add(-6 * time.Minute), now.Add(-6 * time.Minute)},
	} {
		signed, sent := dates[0].Format(time.RFC1123), dates[1].Format(time.RFC1123)
		auth, err := own.Sign(signed, false)
		if err != nil {
			t.Fatal(err)
		}
		if status, code := rawGet(t, s, "/"+s.Account(), sent, auth); status != http.StatusUnauthorized || code != "InvalidSignature" {
			t.Errorf("%s: %d %s, want 401 InvalidSignature", name, status, code)
		}
	}
}

func TestSubUserAndOtherAccount(t *testing.T) {
	s := NewServer(t, Options{})
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddKey(s.Account(), "operator", &k.PublicKey); err != nil {
		t.Fatal(err)
	}
	c := connectWith(t, s, rsaSigner(t, k, s.Account(), "operator"))
	if _, err := c.account.Get(ctx(), &account.GetInput{}); err != nil {
		t.Fatalf("sub-user: %v", err)
	}
	// The operator's key signing for an account whose path is not its own.
	auth, err := rsaSigner(t, k, s.Account(), "operator").Sign(time.Now().UTC().Format(time.RFC1123), false)
	if err != nil {
		t.Fatal(err)
	}
	if status, code := rawGet(t, s, "/someone-else/machines", time.Now().UTC().Format(time.RFC1123), auth); status != http.StatusForbidden || code != "NotAuthorized" {
		t.Fatalf("other account: %d %s, want 403 NotAuthorized", status, code)
	}
}

func TestEd25519Key(t *testing.T) {
	s := NewServer(t, Options{})
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, sha, err := s.AddKey(s.Account(), "", pub)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC().Format(time.RFC1123)
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte("date: "+date)))
	auth := fmt.Sprintf(`Signature keyId="/%s/keys/%s",algorithm="ed25519-sha512",headers="date",signature="%s"`, s.Account(), sha, sig)
	if status, code := rawGet(t, s, "/"+s.Account(), date, auth); status != http.StatusOK {
		t.Fatalf("ed25519 with a SHA256 fingerprint: %d %s", status, code)
	}
}

// rsaSigner is triton-go's own signer for key (PKCS #1, MD5 keyId).
func rsaSigner(t *testing.T, key *rsa.PrivateKey, acct, user string) authentication.Signer {
	t.Helper()
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: ssh.FingerprintLegacyMD5(pub), PrivateKeyMaterial: pemBytes, AccountName: acct, Username: user,
	})
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// rawGet sends GET path with Date and Authorization headers as given, and
// returns the status and error code.
func rawGet(t *testing.T, s *Server, path, date, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(), http.MethodGet, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", date)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body apiError
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if strings.Contains(body.Message, string(s.AccountKeyPEM())) {
		t.Fatal("an error message holds the key")
	}
	return resp.StatusCode, body.Code
}
