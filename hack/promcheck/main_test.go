package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden is the configuration the Triton metrics controller writes with
// its default settings, kept current by providers/triton's
// TestCMONPrometheusGolden.
var golden = filepath.Join("..", "..", "providers", "triton", "testdata", "cmon-prometheus.yml")

func TestControllerConfig(t *testing.T) {
	if err := check(golden); err != nil {
		t.Fatal(err)
	}
}

// The checks fail on what the job must not lose: a file Prometheus
// refuses, and a job without its discovery, its TLS or its relabelling.
func TestCheckFails(t *testing.T) {
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	// The discovery is the job's last key: cut it, scrape a fixed target.
	static := good[:strings.Index(good, "  triton_sd_configs:")] + "  static_configs:\n  - targets: [localhost:9163]\n"
	for name, bad := range map[string]string{
		"not Prometheus's": strings.Replace(good, "role: container", "role: vm", 1),
		"no relabelling":   strings.Replace(good, "target_label: node", "target_label: host", 1),
		"http":             strings.Replace(good, "scheme: https", "scheme: http", 1),
		"another group":    strings.Replace(good, "- k8s-", "- x-", 1),
		"no triton_sd":     static,
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "prometheus.yml")
			if err := os.WriteFile(f, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			err := check(f)
			if err == nil {
				t.Fatalf("no error for:\n%s", bad)
			}
			t.Log(err)
		})
	}
}
