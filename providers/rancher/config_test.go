package rancher_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/rancher"
)

func load(vars map[string]string) (*rancher.Config, error) {
	cfg := &rancher.Config{}
	err := config.Load(cfg, config.Source{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	return cfg, err
}

// Every bad setting is reported at once, named by its variable, and no
// error holds the secret key or a password in the URL.
func TestConfigErrors(t *testing.T) {
	const (
		url    = "http://rancher.example.com:8080/v2-beta/projects/1a5"
		secret = "secret-key-do-not-print"
	)
	keys := map[string]string{"CATTLE_URL": url, "CATTLE_ACCESS_KEY": "AK", "CATTLE_SECRET_KEY": secret}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range keys {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"nothing", nil, []string{"CATTLE_URL: required", "CATTLE_ACCESS_KEY: required", "CATTLE_SECRET_KEY: required"}},
		{"not http", with("CATTLE_URL", "ftp://rancher.example.com"), []string{"CATTLE_URL: ftp://rancher.example.com is not an http(s) URL"}},
		{"password in the URL", with("CATTLE_URL", "http://ak:hunter2@rancher.example.com/v1"), []string{"CATTLE_URL: ", "holds credentials"}},
		{"query", with("CATTLE_URL", url+"?x=1"), []string{"CATTLE_URL: ", "has a query"}},
		{"no host", with("CATTLE_URL", "http:///v2-beta"), []string{"CATTLE_URL: "}},
		{"bad label key", with("RANCHER_ZONE_LABELS", "topology.kubernetes.io/zone,not a key"), []string{`RANCHER_ZONE_LABELS: "not a key" is not a label key`}},
		{"bad default type", with("RANCHER_DEFAULT_INSTANCE_TYPE", "two words"), []string{"RANCHER_DEFAULT_INSTANCE_TYPE: "}},
		{"secret file missing", with("CATTLE_SECRET_KEY", "", "CATTLE_SECRET_KEY_FILE", ""), []string{"CATTLE_SECRET_KEY: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.vars)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, s := range []string{secret, "hunter2"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error holds %q: %v", s, err)
				}
			}
		})
	}
}

// The defaults load, and a /v1 URL (what Rancher injected into the old
// CCM's container) is accepted.
func TestConfigDefaults(t *testing.T) {
	cfg, err := load(map[string]string{"CATTLE_URL": "http://rancher:8080/v1", "CATTLE_ACCESS_KEY": "AK", "CATTLE_SECRET_KEY": "SK"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultInstanceType != "rancher" || len(cfg.ZoneLabels) != 2 || cfg.ExternalIPLabels[0] != "io.rancher.host.external_dns_ip" {
		t.Errorf("defaults not applied: %+v", cfg)
	}
}
