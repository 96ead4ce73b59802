package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
)

// TestRunTriton serves the Triton example: the printed environment is
// triton-go's, TRITON_KEY_MATERIAL the path of the key cloudsim wrote, and
// triton-go signing with that key reads the machines the scenario seeds.
func TestRunTriton(t *testing.T) {
	data, err := os.ReadFile("../../examples/cloudsim/triton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	scenario := filepath.Join(dir, "triton.yaml")
	data = []byte(strings.Replace(string(data), "/tmp/tritonsim-ccmkit.pem", keyFile, 1))
	if err := os.WriteFile(scenario, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cs := startRun(t, "--scenario="+scenario)
	u := cs.env["CLOUDSIM_URL"]
	wantEnv := map[string]string{
		"CLOUDSIM_URL":        u,
		"CLOUDSIM_PROVIDER":   "triton",
		"TRITON_URL":          u,
		"TRITON_ACCOUNT":      "ccmkit",
		"TRITON_KEY_ID":       cs.env["TRITON_KEY_ID"],
		"TRITON_KEY_MATERIAL": keyFile,
		// CMON, which the services list advertises, is served too.
		"TRITON_CMON_URL":     cs.env["TRITON_CMON_URL"],
		"TRITON_CMON_CA_FILE": filepath.Join(dir, "key-cmon-ca.pem"),
	}
	if diff := cmp.Diff(wantEnv, cs.env); diff != "" {
		t.Fatalf("printed environment (-want +got):\n%s", diff)
	}
	checkCMONServed(t, cs.env["TRITON_CMON_URL"], cs.env["TRITON_CMON_CA_FILE"])
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: cs.env["TRITON_KEY_ID"], PrivateKeyMaterial: pem, AccountName: "ccmkit",
	})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := compute.NewClient(&triton.ClientConfig{TritonURL: u, AccountName: "ccmkit", Signers: []authentication.Signer{signer}})
	if err != nil {
		t.Fatal(err)
	}
	machines, err := cc.Instances().List(t.Context(), &compute.ListInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range machines {
		got = append(got, m.Name+"/"+m.State)
	}
	want := []string{"worker-1/running", "worker-2/running", "worker-3/stopped", "lb-web/running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("machines (-want +got):\n%s", diff)
	}
}

// checkCMONServed checks that CMON answers at url over TLS with the
// certificate caFile holds, asking for a client certificate: without one,
// 401 as CMON answers.
func checkCMONServed(t *testing.T, url, caFile string) {
	t.Helper()
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/v1/discover", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("CMON at %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("CMON /v1/discover without a client certificate: %s, want 401", resp.Status)
	}
}
