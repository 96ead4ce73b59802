package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// secretValue is distinctive so tests can assert it never leaks.
const secretValue = "dop_v1_s3cr3t-never-print-me"

type doConfig struct {
	Token   Secret        `json:"token" env:"DO_ACCESS_TOKEN" required:"true" doc:"API token."`
	Region  string        `json:"region" env:"DO_REGION" default:"nyc3" doc:"Region slug."`
	Debug   bool          `json:"debug" env:"DO_DEBUG"`
	QPS     float64       `json:"qps" env:"DO_API_QPS" default:"5"`
	Burst   int           `json:"burst" env:"DO_API_BURST" default:"10"`
	Timeout time.Duration `json:"timeout" env:"DO_API_TIMEOUT" default:"30s"`
	Tags    []string      `json:"tags" env:"DO_TAGS"`
	LB      lbConfig      `json:"loadBalancer"`
}

type lbConfig struct {
	NamePrefix          string        `json:"namePrefix" env:"DO_LB_NAME_PREFIX" default:"k8s"`
	HealthCheckInterval time.Duration `json:"healthCheckInterval" env:"DO_LB_HEALTH_CHECK_INTERVAL" default:"10s"`
	Proxy               proxyConfig   `json:"proxy"`
}

type proxyConfig struct {
	Enabled bool `json:"enabled" env:"DO_LB_PROXY_PROTOCOL"`
}

// defaults is doConfig after Load with only the token set.
func defaults() doConfig {
	return doConfig{
		Token:   NewSecret(secretValue),
		Region:  "nyc3",
		QPS:     5,
		Burst:   10,
		Timeout: 30 * time.Second,
		LB:      lbConfig{NamePrefix: "k8s", HealthCheckInterval: 10 * time.Second},
	}
}

func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	tokenFile := writeFile(t, "token", secretValue+"\n")
	tests := []struct {
		name   string
		file   string // config file content; "" for no file
		env    map[string]string
		modify func(c *doConfig) // applied to defaults() for the wanted result
	}{
		{
			name:   "defaults",
			env:    map[string]string{"DO_ACCESS_TOKEN": secretValue},
			modify: func(c *doConfig) {},
		},
		{
			name: "file only",
			file: `
token: ` + secretValue + `
region: fra1
debug: true
qps: 2.5
burst: 3
timeout: 1m30s
tags: [k8s, prod]
loadBalancer:
  namePrefix: lb
  healthCheckInterval: 5s
  proxy:
    enabled: true
`,
			modify: func(c *doConfig) {
				c.Region, c.Debug, c.QPS, c.Burst, c.Timeout = "fra1", true, 2.5, 3, 90*time.Second
				c.Tags = []string{"k8s", "prod"}
				c.LB = lbConfig{NamePrefix: "lb", HealthCheckInterval: 5 * time.Second, Proxy: proxyConfig{Enabled: true}}
			},
		},
		{
			name: "env overrides file",
			file: "token: from-file\nregion: fra1\nburst: 3\ntags: [a]\nloadBalancer: {namePrefix: lb}\n",
			env: map[string]string{
				"DO_ACCESS_TOKEN":   secretValue,
				"DO_REGION":         "ams3",
				"DO_API_BURST":      "7",
				"DO_TAGS":           "x, y,,z ",
				"DO_LB_NAME_PREFIX": "env",
			},
			modify: func(c *doConfig) {
				c.Region, c.Burst, c.Tags, c.LB.NamePrefix = "ams3", 7, []string{"x", "y", "z"}, "env"
			},
		},
		{
			name: "env sets every type and nested fields",
			env: map[string]string{
				"DO_ACCESS_TOKEN":             secretValue,
				"DO_DEBUG":                    "yes",
				"DO_API_QPS":                  "0.5",
				"DO_API_TIMEOUT":              "2m",
				"DO_LB_HEALTH_CHECK_INTERVAL": "15s",
				"DO_LB_PROXY_PROTOCOL":        "true",
			},
			modify: func(c *doConfig) {
				c.Debug, c.QPS, c.Timeout = true, 0.5, 2*time.Minute
				c.LB.HealthCheckInterval, c.LB.Proxy.Enabled = 15*time.Second, true
			},
		},
		{
			name:   "empty env var counts as unset",
			file:   "token: " + secretValue + "\nregion: fra1\n",
			env:    map[string]string{"DO_REGION": "", "DO_API_BURST": "", "DO_ACCESS_TOKEN": ""},
			modify: func(c *doConfig) { c.Region = "fra1" },
		},
		{
			name: "secret from _FILE",
			env:  map[string]string{"DO_ACCESS_TOKEN_FILE": tokenFile},
			modify: func(c *doConfig) {
				c.Token = SecretFromFile(tokenFile)
			},
		},
		{
			name:   "file keys match case-insensitively and scalars become strings",
			file:   "TOKEN: " + secretValue + "\nRegion: 1\n",
			modify: func(c *doConfig) { c.Region = "1" },
		},
		{
			name:   "empty file",
			file:   "\n# nothing\n",
			env:    map[string]string{"DO_ACCESS_TOKEN": secretValue},
			modify: func(c *doConfig) {},
		},
		{
			name:   "JSON file",
			file:   `{"token": "` + secretValue + `", "burst": 4}`,
			modify: func(c *doConfig) { c.Burst = 4 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := Source{LookupEnv: envOf(tt.env)}
			if tt.file != "" {
				src.File = writeFile(t, "cloud.yaml", tt.file)
			}
			var got doConfig
			if err := Load(&got, src); err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			want := defaults()
			tt.modify(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load() mismatch (-want +got):\n%s", diff)
			}
			if v, err := got.Token.Reveal(); err != nil || v != secretValue {
				t.Errorf("Token.Reveal() = %q, %v; want the secret", v, err)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tokenFile := writeFile(t, "token", secretValue)
	emptyFile := writeFile(t, "empty", "\n")
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		wantErr []string // each must appear in the error
	}{
		{
			name:    "required missing names the env var",
			wantErr: []string{"DO_ACCESS_TOKEN: required", "DO_ACCESS_TOKEN_FILE", `"token" in the cloud config`},
		},
		{
			name: "unknown file keys are all named",
			file: "token: " + secretValue + "\nregoin: fra1\nloadBalancer:\n  namePrefx: x\n  proxy: {enabeld: true}\n",
			wantErr: []string{
				`unknown key "regoin"`,
				`unknown key "loadBalancer.namePrefx"`,
				`unknown key "loadBalancer.proxy.enabeld"`,
			},
		},
		{
			name: "bad env values name the variable and the value",
			env: map[string]string{
				"DO_ACCESS_TOKEN": secretValue,
				"DO_API_BURST":    "ten",
				"DO_DEBUG":        "maybe",
				"DO_API_TIMEOUT":  "30",
				"DO_API_QPS":      "fast",
			},
			wantErr: []string{
				`DO_API_BURST: invalid int "ten"`,
				`DO_DEBUG: invalid bool "maybe"`,
				`DO_API_TIMEOUT: invalid duration "30"`,
				`DO_API_QPS: invalid float64 "fast"`,
			},
		},
		{
			name:    "int out of range",
			env:     map[string]string{"DO_ACCESS_TOKEN": secretValue, "DO_API_BURST": "99999999999999999999"},
			wantErr: []string{`DO_API_BURST: invalid int "99999999999999999999": out of range`},
		},
		{
			name: "bad file values name the key",
			file: "token: 12345\nburst: many\ntimeout: 30\nqps: [1]\ndebug: 1\nregion: {a: b}\ntags: x\nloadBalancer: {healthCheckInterval: soon}\n",
			env:  map[string]string{"DO_ACCESS_TOKEN": secretValue},
			wantErr: []string{
				`key "token": a secret must be a string, got a number`,
				`key "burst": want an integer, got a string`,
				`key "timeout": want a duration such as "30s", got a number`,
				`key "qps": want a number, got a list`,
				`key "debug": want true or false, got a number`,
				`key "region": want a string, got a mapping`,
				`key "tags": want a list, got a string`,
				`key "loadBalancer.healthCheckInterval": invalid duration "soon"`,
			},
		},
		{
			name: "several sources of errors at once",
			file: "regoin: x\n",
			env:  map[string]string{"DO_API_BURST": "ten"},
			wantErr: []string{
				`unknown key "regoin"`,
				`DO_API_BURST: invalid int "ten"`,
				`DO_ACCESS_TOKEN: required`,
			},
		},
		{
			name:    "secret and its _FILE both set",
			env:     map[string]string{"DO_ACCESS_TOKEN": secretValue, "DO_ACCESS_TOKEN_FILE": tokenFile},
			wantErr: []string{"DO_ACCESS_TOKEN and DO_ACCESS_TOKEN_FILE are both set"},
		},
		{
			name:    "secret _FILE missing",
			env:     map[string]string{"DO_ACCESS_TOKEN_FILE": missing},
			wantErr: []string{"DO_ACCESS_TOKEN_FILE: ", missing, "no such file"},
		},
		{
			name:    "secret _FILE empty",
			env:     map[string]string{"DO_ACCESS_TOKEN_FILE": emptyFile},
			wantErr: []string{"DO_ACCESS_TOKEN: required, but secret file " + emptyFile + " is empty"},
		},
		{
			name:    "config file missing",
			env:     map[string]string{"DO_ACCESS_TOKEN": secretValue},
			file:    "\x00missing", // sentinel: point Source.File at a missing path
			wantErr: []string{"cloud config: open " + missing},
		},
		{
			name:    "YAML syntax error",
			file:    "token: [\n",
			wantErr: []string{"cloud config"},
		},
		{
			name:    "duplicate key",
			file:    "token: a\ntoken: b\n",
			wantErr: []string{`"token" already set`},
		},
		{
			name:    "document is not a mapping",
			file:    "- token\n",
			wantErr: []string{"the document: want a mapping, got a list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := Source{LookupEnv: envOf(tt.env)}
			switch tt.file {
			case "":
			case "\x00missing":
				src.File = missing
			default:
				src.File = writeFile(t, "cloud.yaml", tt.file)
			}
			var c doConfig
			err := Load(&c, src)
			if err == nil {
				t.Fatal("Load() succeeded, want an error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Load() error does not contain %q:\n%v", s, err)
				}
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("Load() error reveals the secret:\n%v", err)
			}
		})
	}
}

// TestLoadBadKeyKeepsGoodKeys checks that a typo in one key does not also
// report a required setting the file provides as missing.
func TestLoadBadKeyKeepsGoodKeys(t *testing.T) {
	file := writeFile(t, "cloud.yaml", "token: "+secretValue+"\nregoin: fra1\nburst: many\n")
	var c doConfig
	err := Load(&c, Source{File: file, LookupEnv: envOf(nil)})
	if err == nil {
		t.Fatal("Load() succeeded, want an error")
	}
	if got := len(flatten(err)); got != 2 {
		t.Errorf("Load() reported %d problems, want 2 (regoin, burst):\n%v", got, err)
	}
	if strings.Contains(err.Error(), "required") {
		t.Errorf("Load() reports the token as missing:\n%v", err)
	}
}

func TestLoadNeverPrintsSecret(t *testing.T) {
	var c doConfig
	if err := Load(&c, Source{LookupEnv: envOf(map[string]string{"DO_ACCESS_TOKEN": secretValue})}); err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%v %+v %#v", c, c, c)
	out += fmt.Sprintf("%v %+v %#v", &c, &c, &c)
	out += fmt.Sprintf("%v %+v %#v %s %q %x %X %d", c.Token, c.Token, c.Token, c.Token, c.Token, c.Token, c.Token, c.Token)
	out += fmt.Sprint(c, &c.Token) + fmt.Sprintln(c)
	if strings.Contains(out, secretValue) {
		t.Errorf("formatted config reveals the secret: %s", out)
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("formatted config does not show the secret as [redacted]: %s", out)
	}
}

type rangeConfig struct {
	Min int `json:"min" env:"MIN"`
	Max int `json:"max" env:"MAX" default:"10"`
}

func (c *rangeConfig) Validate() error {
	if c.Min > c.Max {
		return fmt.Errorf("MIN (%d) must not exceed MAX (%d)", c.Min, c.Max)
	}
	return nil
}

func TestLoadValidate(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    rangeConfig
		wantErr string
	}{
		{name: "valid", env: map[string]string{"MIN": "3"}, want: rangeConfig{Min: 3, Max: 10}},
		{name: "Validate error included", env: map[string]string{"MIN": "30"}, wantErr: "MIN (30) must not exceed MAX (10)"},
		{name: "not called on a config that failed to load", env: map[string]string{"MIN": "30", "MAX": "x"}, wantErr: `MAX: invalid int "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got rangeConfig
			err := Load(&got, Source{LookupEnv: envOf(tt.env)})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Load() error = %v, want exactly %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type extraTypes struct {
	Prefix   netip.Prefix   `json:"prefix" env:"PREFIX"`
	Enabled  *bool          `json:"enabled" env:"ENABLED"`
	Port     uint16         `json:"port" env:"PORT"`
	Mode     mode           `json:"mode" env:"MODE" default:"fast"`
	Zones    []mode         `json:"zones" env:"ZONES"`
	Wait     *time.Duration `json:"wait" env:"WAIT"`
	Internal string         `json:"-"`
	Base
}

type mode string

// Base is embedded; its fields are promoted in the file, as encoding/json does.
type Base struct {
	ClusterName string `json:"clusterName" env:"CLUSTER_NAME" default:"kubernetes"`
}

func TestLoadExtraTypes(t *testing.T) {
	file := writeFile(t, "cloud.yaml", "clusterName: prod\nport: 8080\nwait: 2s\nprefix: 10.0.0.0/8\n")
	var got extraTypes
	got.Internal = "kept"
	err := Load(&got, Source{File: file, LookupEnv: envOf(map[string]string{
		"PREFIX":  "fd00::/64",
		"ENABLED": "false",
		"ZONES":   "a,b",
	})})
	if err != nil {
		t.Fatal(err)
	}
	f, wait := false, 2*time.Second
	want := extraTypes{
		Prefix:   netip.MustParsePrefix("fd00::/64"),
		Enabled:  &f,
		Port:     8080,
		Mode:     "fast",
		Zones:    []mode{"a", "b"},
		Wait:     &wait,
		Internal: "kept",
		Base:     Base{ClusterName: "prod"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}

	err = Load(&got, Source{LookupEnv: envOf(map[string]string{"PREFIX": "nope", "PORT": "70000"})})
	for _, s := range []string{`PREFIX: invalid netip.Prefix "nope"`, `PORT: invalid uint16 "70000": out of range`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("Load() error = %v, want it to contain %q", err, s)
		}
	}
}

func TestLoadKeepsValuesSetBeforeLoad(t *testing.T) {
	c := doConfig{Region: "sfo3", Token: NewSecret(secretValue)}
	if err := Load(&c, Source{LookupEnv: envOf(nil)}); err != nil {
		t.Fatal(err)
	}
	if c.Region != "sfo3" {
		t.Errorf("Region = %q, want the value set before Load", c.Region)
	}
}

func TestLoadReadsProcessEnvironment(t *testing.T) {
	t.Setenv("DO_ACCESS_TOKEN", secretValue)
	t.Setenv("DO_REGION", "lon1")
	var c doConfig
	if err := Load(&c, Source{}); err != nil {
		t.Fatal(err)
	}
	if c.Region != "lon1" {
		t.Errorf("Region = %q, want lon1 from the environment", c.Region)
	}
}

func TestLoadArguments(t *testing.T) {
	var c doConfig
	n := 1
	for _, out := range []any{nil, c, &n, (*doConfig)(nil)} {
		if err := Load(out, Source{}); err == nil {
			t.Errorf("Load(%T) succeeded, want an error", out)
		}
	}
}

type formatFunc func(data []byte, out any) error

func (formatFunc) Name() string                        { return "test" }
func (f formatFunc) Decode(data []byte, out any) error { return f(data, out) }

func TestLoadCustomFormat(t *testing.T) {
	file := writeFile(t, "cloud.conf", "[Global]\nregion = x\n")
	var gotData string
	format := formatFunc(func(data []byte, out any) error {
		gotData = string(data)
		out.(*doConfig).Region = "from-format"
		return errors.Join(errors.New("first problem"), errors.New("second problem"))
	})
	var c doConfig
	err := Load(&c, Source{File: file, Format: format, LookupEnv: envOf(map[string]string{"DO_ACCESS_TOKEN": "t"})})
	if gotData != "[Global]\nregion = x\n" {
		t.Errorf("Format got %q", gotData)
	}
	want := "cloud config " + file + ": first problem\ncloud config " + file + ": second problem"
	if err == nil || err.Error() != want {
		t.Errorf("Load() error = %v, want %q", err, want)
	}
}
