package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type secretDataConfig struct {
	Token   Secret        `json:"token" env:"SD_TOKEN" secret:"token"`
	KeyFile Secret        `json:"keyFile" env:"SD_KEY" secret:"key.pem"`
	URL     string        `json:"url" env:"SD_URL" default:"https://api.example" secret:"SD_URL"`
	Account string        `json:"account" env:"SD_ACCOUNT" secret:"SD_ACCOUNT"`
	Verbose bool          `json:"verbose" env:"SD_VERBOSE" secret:"SD_VERBOSE"`
	Retries int           `json:"retries" env:"SD_RETRIES" secret:"SD_RETRIES"`
	Wait    time.Duration `json:"wait" env:"SD_WAIT" secret:"SD_WAIT"`
	Tags    []string      `json:"tags" env:"SD_TAGS" secret:"SD_TAGS"`
	Region  string        `json:"region" env:"SD_REGION"`
}

func TestSecretData(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("-----BEGIN KEY-----\nabc\n-----END KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"SD_TOKEN": "t0k", "SD_KEY_FILE": keyFile, "SD_RETRIES": "3", "SD_WAIT": "90s",
		"SD_TAGS": "a,b", "SD_REGION": "r1",
	}
	var c secretDataConfig
	if err := Load(&c, Source{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}); err != nil {
		t.Fatal(err)
	}
	got, err := SecretData(&c)
	if err != nil {
		t.Fatal(err)
	}
	// Unset fields (SD_ACCOUNT, SD_VERBOSE false) are left out, untagged
	// ones (SD_REGION) too; a file secret holds the file's content; a
	// default counts as set.
	want := map[string][]byte{
		"token":      []byte("t0k"),
		"key.pem":    []byte("-----BEGIN KEY-----\nabc\n-----END KEY-----"),
		"SD_URL":     []byte("https://api.example"),
		"SD_RETRIES": []byte("3"),
		"SD_WAIT":    []byte("1m30s"),
		"SD_TAGS":    []byte("a,b"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretData (-want +got):\n%s", diff)
	}

	// What it wrote loads back to the same config.
	var again secretDataConfig
	back := func(k string) (string, bool) {
		switch k {
		case "SD_TOKEN":
			return string(got["token"]), true
		case "SD_KEY":
			return string(got["key.pem"]), true
		}
		v, ok := got[k]
		return string(v), ok
	}
	if err := Load(&again, Source{LookupEnv: back}); err != nil {
		t.Fatal(err)
	}
	c.Region, c.KeyFile = "", again.KeyFile // not in the Secret; a value now, not a file
	if diff := cmp.Diff(c, again); diff != "" {
		t.Errorf("config loaded from the data (-want +got):\n%s", diff)
	}
}

func TestSecretDataRejectsBadTags(t *testing.T) {
	for name, v := range map[string]any{
		"duplicate key": &struct {
			A Secret `env:"A" secret:"k"`
			B Secret `env:"B" secret:"k"`
		}{},
		"invalid key": &struct {
			A Secret `env:"A" secret:"a/b"`
		}{},
		"not configured": &struct {
			A Secret `json:"-" secret:"a"`
		}{},
		"not a struct": "x",
	} {
		if _, err := SecretData(v); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, err := SecretData(&struct {
		A Secret `env:"A" secret:"a/b"`
	}{})
	if err == nil || !strings.Contains(err.Error(), `secret tag "a/b"`) {
		t.Errorf("invalid key: error %v does not name the tag", err)
	}
}

func TestMarkdownListsSecretKeys(t *testing.T) {
	got, err := Markdown("Example cloud", struct {
		Token Secret `env:"X_TOKEN" secret:"token"`
		URL   string `env:"X_URL" secret:"X_URL"`
		Zone  string `env:"X_ZONE"`
	}{})
	if err != nil {
		t.Fatal(err)
	}
	want := "\n`make-secret` (see [make-secret.md](../make-secret.md)) stores the settings that are set in the Secret under these keys: `token` (`X_TOKEN`), `X_URL`.\n"
	if !strings.HasSuffix(string(got), want) {
		t.Errorf("Markdown() ends\n%s\nwant\n%s", got, want)
	}
}
