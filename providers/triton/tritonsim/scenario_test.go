package tritonsim

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	"golang.org/x/crypto/ssh"
)

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/triton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	data = []byte(strings.Replace(string(data), "/tmp/tritonsim-ccmkit.pem", keyFile, 1))
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	env := s.Env(s.URL())
	if env["TRITON_KEY_MATERIAL"] != keyFile || env["TRITON_ACCOUNT"] != "ccmkit" {
		t.Fatalf("env %v", env)
	}
	if pem, err := os.ReadFile(keyFile); err != nil || string(pem) != string(s.AccountKeyPEM()) {
		t.Fatalf("key file: %v", err)
	}
	if _, err := os.ReadFile(strings.TrimSuffix(keyFile, ".pem") + "-ops.pem"); err != nil {
		t.Fatalf("the ops key's file: %v", err)
	}
	if env["TRITON_CMON_URL"] != s.CMONURL() || env["TRITON_CMON_CA_FILE"] == "" {
		t.Fatalf("env %v lacks CMON", env)
	}
	if keys := s.Keys(); len(keys) != 2 || keys[0].Name != "ccm" || keys[1].Name != "ops" {
		t.Fatalf("keys %+v", keys)
	}
	if limits := s.Limits(); len(limits) != 2 || limits[0] != (Limit{By: "machines", Value: 50, Used: 4}) {
		t.Fatalf("limits %+v", limits)
	}
	c := connect(t, s)
	machines, err := c.compute.Instances().List(ctx(), &compute.ListInstancesInput{Tags: map[string]any{"k8s-cluster": "kubernetes"}})
	if err != nil || len(machines) != 4 {
		t.Fatalf("machines %d, %v", len(machines), err)
	}
	if machines[2].State != StateStopped || machines[0].Package != "g4-highcpu-4G" {
		t.Fatalf("worker-3 %s, worker-1 %s", machines[2].State, machines[0].Package)
	}
	lbs := s.Cloud().LoadBalancers()
	if len(lbs) != 1 || !slices.Equal(lbs[0].Listeners, []string{"TCP:80->:31080"}) ||
		!slices.Equal(lbs[0].Members, sorted(machines[0].ID, machines[1].ID)) {
		t.Fatalf("load balancers %+v", lbs)
	}
	rules, err := c.network.Firewall().ListRules(ctx(), &network.ListRulesInput{})
	if err != nil || len(rules) != 1 || !rules[0].Enabled {
		t.Fatalf("rules %+v, %v", rules, err)
	}
}

func TestScenarioErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":     {"machnes: []", `unknown field "machnes"`},
		"other provider":  {"provider: brightbox", "provider"},
		"bad state":       {"machines: [{name: a, state: exploded}]", `state "exploded"`},
		"unknown package": {"machines: [{name: a, package: g9}]", `package "g9" does not exist`},
		"unknown image":   {"machines: [{name: a, image: nope}]", `image "nope" does not exist`},
		"unknown network": {"machines: [{name: a, networks: [nope]}]", `network "nope" does not exist`},
		"bad triton tag":  {"machines: [{name: a, tags: {triton.foo: x}}]", `Unrecognized special triton tag "triton.foo"`},
		"bad rule":        {"fwrules: [{rule: garbage}]", "fwrules[0]"},
		"bad fault op":    {"faults: [{operation: nope.list, status: 500}]", "unknown operation"},
		"bad account ID":  {"accountID: nope", "accountID"},
		"key, two kinds":  {"keys: [{name: a, generate: rsa, publicKey: 'ssh-ed25519 AAAA'}]", "keys[0]: give exactly one"},
		"key, bad type":   {"keys: [{name: a, generate: dsa}]", `keys[0]: generate: "dsa"`},
		"key, no name":    {"keys: [{generate: ed25519}]", "keys[0]: name: required"},
		"key, garbage":    {"keys: [{publicKey: garbage}]", "keys[0]"},
		"key, same name":  {"keyName: ccm\nkeys: [{name: ccm, generate: ed25519}]", "already exists"},
		"bad limit":       {"limits: [{by: cpus, value: 1}]", `limits[0]: by "cpus"`},
	} {
		_, err := LoadScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

// TestScenarioKeys: a scenario's keys are the account's too (ListKeys
// lists them by name) and sign requests: a generated RSA key, written to
// its keyFile in PKCS #1, signs through triton-go's own PrivateKeySigner;
// generated ECDSA and Ed25519 keys, and a key given by its public half,
// sign as node-triton signs with an agent's keys (ecdsa-sha256,
// ed25519).
func TestScenarioKeys(t *testing.T) {
	dir := t.TempDir()
	given, err := ssh.NewPublicKey(mustEd25519(t).Public())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario([]byte(`
keyFile: ` + filepath.Join(dir, "acct.pem") + `
keyName: ccm
keys:
- {name: ci, generate: rsa}
- {name: ops, generate: ecdsa, keyFile: ` + filepath.Join(dir, "ops-key.pem") + `}
- {name: edge, generate: ed25519}
- {publicKey: "` + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(given))) + ` someone@example.com"}
`))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	var names []string
	for _, k := range s.Keys() {
		names = append(names, k.Name)
	}
	if want := []string{"ccm", "ci", "ops", "edge", ssh.FingerprintLegacyMD5(given)}; !slices.Equal(names, want) {
		t.Fatalf("keys %v, want %v", names, want)
	}

	rsaPEM, err := os.ReadFile(filepath.Join(dir, "acct-ci.pem"))
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := ssh.ParseRawPrivateKey(rsaPEM)
	if err != nil {
		t.Fatal(err)
	}
	c := connectWith(t, s, rsaSigner(t, rsaKey.(*rsa.PrivateKey), s.Account(), ""))
	if keys, err := c.account.Keys().List(ctx(), &account.ListKeysInput{}); err != nil || len(keys) != 5 {
		t.Fatalf("keys listed with the second key's signature: %d, %v", len(keys), err)
	}

	for file, algorithm := range map[string]string{"ops-key.pem": "ecdsa-sha256", "acct-edge.pem": "ed25519"} {
		pemBytes, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		signer, err := ssh.ParsePrivateKey(pemBytes)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		date := time.Now().UTC().Format(time.RFC1123)
		sig, err := signer.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, []byte("date: "+date), "")
		if err != nil {
			t.Fatal(err)
		}
		blob := sig.Blob
		if algorithm == "ecdsa-sha256" { // SSH's (r, s) as ASN.1, as http-signature sends it
			var rs struct{ R, S *big.Int }
			if err := ssh.Unmarshal(sig.Blob, &rs); err != nil {
				t.Fatal(err)
			}
			if blob, err = asn1.Marshal(rs); err != nil {
				t.Fatal(err)
			}
		}
		auth := fmt.Sprintf(`Signature keyId="/%s/keys/%s",algorithm="%s",headers="date",signature="%s"`,
			s.Account(), ssh.FingerprintLegacyMD5(signer.PublicKey()), algorithm, base64.StdEncoding.EncodeToString(blob))
		if status, code := rawGet(t, s, "/my/machines", date, auth); status != http.StatusOK {
			t.Errorf("signed with %s (%s): %d %s", file, algorithm, status, code)
		}
	}
}

func mustEd25519(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
