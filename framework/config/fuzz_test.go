package config_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// fuzzConfig has a setting of every type Load supports, a required
// Secret, sections, and a Validate method.
type fuzzConfig struct {
	Token    config.Secret  `json:"token" env:"FZ_TOKEN" required:"true"`
	Password config.Secret  `json:"password" env:"FZ_PASSWORD"`
	Region   string         `json:"region" env:"FZ_REGION" default:"nyc3"`
	Debug    bool           `json:"debug" env:"FZ_DEBUG"`
	QPS      float64        `json:"qps" env:"FZ_QPS" default:"5"`
	Burst    int            `json:"burst" env:"FZ_BURST" default:"10"`
	Port     uint16         `json:"port" env:"FZ_PORT"`
	Timeout  time.Duration  `json:"timeout" env:"FZ_TIMEOUT" default:"30s"`
	Wait     *time.Duration `json:"wait" env:"FZ_WAIT"`
	Enabled  *bool          `json:"enabled" env:"FZ_ENABLED"`
	Tags     []string       `json:"tags" env:"FZ_TAGS"`
	Prefix   netip.Prefix   `json:"prefix" env:"FZ_PREFIX"`
	LB       struct {
		NamePrefix string        `json:"namePrefix" env:"FZ_LB_NAME_PREFIX" default:"k8s"`
		Interval   time.Duration `json:"interval" env:"FZ_LB_INTERVAL" default:"10s"`
		Nested     struct {
			On bool `json:"on" env:"FZ_LB_ON"`
		} `json:"nested"`
	} `json:"loadBalancer"`
	Internal string `json:"-"`
}

// Validate reads every field, as providers' Validate methods do.
func (c *fuzzConfig) Validate() error {
	if c.QPS < 0 {
		return textErr("FZ_QPS: must not be negative")
	}
	return nil
}

type textErr string

func (e textErr) Error() string { return string(e) }

// FuzzLoad loads a fuzzed YAML --cloud-config file and a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the same
// outcome twice, and no error holding a secret, whether it came from the
// environment (fuzzkit.Env marks those) or from the file's token and
// password keys.
func FuzzLoad(f *testing.F) {
	for _, s := range [][2]string{
		{"token: s3cr3t-file-token\nregion: ams3\nloadBalancer:\n  namePrefix: x\n", ""},
		{"", "FZ_TOKEN=tok\nFZ_QPS=-1\nFZ_PORT=70000\nFZ_TIMEOUT=1x\nFZ_PREFIX=10.0.0.1/33"},
		{"token: [s3cr3t-in-a-list, b]\n", ""},
		{"token: {value: s3cr3t-in-a-map}\npassword: 123456789\n", ""},
		{"{\"token\": \"s3cr3t-json\", \"qps\": \"many\", \"burst\": 1.5}", "FZ_PASSWORD=pw\nFZ_TOKEN=t"},
		{"token: s3cr3t-file-token\nunknown: y\ntags: a\n", "FZ_ENABLED=maybe\nFZ_WAIT=-1s\nFZ_TAGS=a,,b"},
		{"loadBalancer: [1, 2]\nport: -1\nprefix: nonsense\npassword: true\n", "#0=x\n#3=\xff"},
		{"token: !!binary czNjcjN0LWJpbmFyeQ==\npassword: 0x7fffffffffff\n", ""},
		{": : :\n\t- x", "FZ_DEBUG=on"},
	} {
		f.Add(s[0], s[1])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file, envText string) {
		env := fuzzkit.Env[fuzzConfig](t, envText)
		path := ""
		if file != "" {
			path = filepath.Join(dir, "cloud.yaml")
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(file, fuzzkit.Canary, "")), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := fuzzkit.Load[fuzzConfig](t, env, path, nil)
		fuzzkit.NoSecret(t, err, fileSecrets(file)...)
	})
}

// fileSecrets returns what the file's token and password keys hold (every
// scalar under them), leaving out values the file spells more than once or
// when it uses YAML aliases: another setting may then hold the same text,
// and its error may rightly show it.
func fileSecrets(file string) []string {
	var doc map[string]any
	if yaml.Unmarshal([]byte(file), &doc) != nil || strings.Contains(file, "*") {
		return nil
	}
	var out []string
	for _, k := range []string{"token", "password"} {
		for _, v := range scalars(doc[k]) {
			if strings.Count(file, v) == 1 {
				out = append(out, v)
			}
		}
	}
	return out
}

// scalars lists the scalar values in v, a decoded YAML value, as text.
func scalars(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, scalars(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, scalars(e)...)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}
