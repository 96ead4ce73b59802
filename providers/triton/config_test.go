package triton_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/triton"
)

func load(vars map[string]string) (*triton.Config, error) {
	cfg := &triton.Config{}
	err := config.Load(cfg, config.Source{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	return cfg, err
}

// Every bad setting is reported at once, named by its variable, and no
// error holds the key or a password in the URL.
func TestConfigErrors(t *testing.T) {
	const key = "-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0\n-----END RSA PRIVATE KEY-----"
	tests := []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"nothing", nil, []string{"TRITON_URL: required", "TRITON_ACCOUNT: required", "TRITON_KEY_MATERIAL: required"}},
		{"not http", map[string]string{"TRITON_URL": "ftp://user:hunter2@example.com", "TRITON_ACCOUNT": "a", "TRITON_KEY_MATERIAL": key}, []string{"TRITON_URL: ftp://REDACTED@example.com is not an http(s) URL"}},
		{"query", map[string]string{"TRITON_URL": "https://example.com/?x=1", "TRITON_ACCOUNT": "a", "TRITON_KEY_MATERIAL": key}, []string{"TRITON_URL: https://example.com/?x=1 has a query"}},
		{"bad bool", map[string]string{"TRITON_URL": "https://example.com", "TRITON_ACCOUNT": "a", "TRITON_KEY_MATERIAL": key, "TRITON_SKIP_TLS_VERIFY": "maybe"}, []string{"TRITON_SKIP_TLS_VERIFY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.vars)
			wantErr(t, err, tt.want...)
			for _, secret := range []string{"c2VjcmV0", "hunter2"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error holds %q: %v", secret, err)
				}
			}
		})
	}
}

// The SDC_* names fill the settings whose TRITON_* names are unset; the
// TRITON_* names win.
func TestConfigLegacyNames(t *testing.T) {
	cfg, err := load(map[string]string{
		"SDC_URL": "https://old.example.com", "TRITON_URL": "https://new.example.com",
		"SDC_ACCOUNT": "acct", "SDC_USER": "ops", "SDC_KEY_ID": "SHA256:abc",
		"SDC_KEY_MATERIAL": "/keys/id_ed25519",
	})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := cfg.KeyMaterial.Reveal()
	if cfg.URL != "https://new.example.com" || cfg.Account != "acct" || cfg.User != "ops" || cfg.KeyID != "SHA256:abc" || key != "/keys/id_ed25519" {
		t.Errorf("config = %+v (key %q)", cfg, key)
	}
}
