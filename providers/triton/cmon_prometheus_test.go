package triton

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// cmonGoldenFile is the Prometheus configuration the controller writes
// with the default settings, which hack/promcheck loads with Prometheus's
// own config loader.
const cmonGoldenFile = "testdata/cmon-prometheus.yml"

// TestCMONPrometheusGolden keeps testdata/cmon-prometheus.yml the
// configuration prometheusConfig writes for default settings (go test
// -run TestCMONPrometheusGolden -update rewrites it), so that
// hack/promcheck checks what the controller writes.
func TestCMONPrometheusGolden(t *testing.T) {
	s := CMONSettings{}.withDefaults()
	got, err := prometheusConfig(cmonPromJob{
		cluster: "kubernetes", account: "example", group: s.cmonGroup("kubernetes"),
		endpoint: cmonEndpoint{host: "cmon.us-east-1.triton.zone", port: defaultCMONPort}, certDir: s.CertDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(cmonGoldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cmonGoldenFile, got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(cmonGoldenFile)
	if err != nil {
		t.Fatalf("%v (go test -run TestCMONPrometheusGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (go test -run TestCMONPrometheusGolden -update rewrites it); the controller writes:\n%s", cmonGoldenFile, got)
	}
}

// The CA file and the skipped check appear in both TLS configurations
// when set, and only then.
func TestCMONPrometheusTLSOptions(t *testing.T) {
	base := cmonPromJob{cluster: "c", account: "a", group: "k8s-c", endpoint: cmonEndpoint{host: "cmon.x", port: 9163}, certDir: "/etc/p"}
	plain, _ := prometheusConfig(base)
	for _, absent := range []string{"ca_file", "insecure_skip_verify"} {
		if bytes.Contains(plain, []byte(absent)) {
			t.Errorf("%s without its setting:\n%s", absent, plain)
		}
	}
	base.caFile, base.insecure = "/etc/ca/ca.crt", true
	withTLS, _ := prometheusConfig(base)
	for _, present := range []string{"ca_file: /etc/ca/ca.crt", "insecure_skip_verify: true"} {
		if n := bytes.Count(withTLS, []byte(present)); n != 2 {
			t.Errorf("%q %d times, want in both TLS configurations:\n%s", present, n, withTLS)
		}
	}
}
