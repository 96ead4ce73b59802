package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFields(t *testing.T) {
	want := []Field{
		{Env: "DO_ACCESS_TOKEN", FileKey: "token", Type: "secret", Required: true, Doc: "API token."},
		{Env: "DO_REGION", FileKey: "region", Type: "string", Default: "nyc3", Doc: "Region slug."},
		{Env: "DO_DEBUG", FileKey: "debug", Type: "bool"},
		{Env: "DO_API_QPS", FileKey: "qps", Type: "float64", Default: "5"},
		{Env: "DO_API_BURST", FileKey: "burst", Type: "int", Default: "10"},
		{Env: "DO_API_TIMEOUT", FileKey: "timeout", Type: "duration", Default: "30s"},
		{Env: "DO_TAGS", FileKey: "tags", Type: "[]string"},
		{Env: "DO_LB_NAME_PREFIX", FileKey: "loadBalancer.namePrefix", Type: "string", Default: "k8s"},
		{Env: "DO_LB_HEALTH_CHECK_INTERVAL", FileKey: "loadBalancer.healthCheckInterval", Type: "duration", Default: "10s"},
		{Env: "DO_LB_PROXY_PROTOCOL", FileKey: "loadBalancer.proxy.enabled", Type: "bool"},
	}
	for _, v := range []any{doConfig{}, &doConfig{}, (*doConfig)(nil)} {
		got, err := Fields(v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Fields(%T) mismatch (-want +got):\n%s", v, diff)
		}
	}
}

func TestFieldsKeys(t *testing.T) {
	type cfg struct {
		Untagged  string // the file key is the Go name, as encoding/json does
		NotInFile string `json:"-" env:"NOT_IN_FILE"`
		Ignored   string `json:"-"`
		Hidden    struct {
			A string `json:"a" env:"A"`
		} `json:"-"`
		Named struct {
			B string `json:"b" env:"B"`
		} `json:"named,omitempty"`
		Base        // promoted
		_    string `env:"UNEXPORTED"`
	}
	want := []Field{
		{FileKey: "Untagged", Type: "string"},
		{Env: "NOT_IN_FILE", Type: "string"},
		{Env: "A", Type: "string"},
		{Env: "B", FileKey: "named.b", Type: "string"},
		{Env: "CLUSTER_NAME", FileKey: "clusterName", Type: "string", Default: "kubernetes"},
	}
	got, err := Fields(cfg{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fields() mismatch (-want +got):\n%s", diff)
	}
}

func TestFieldsRejectsBadTags(t *testing.T) {
	type bad struct {
		Map      map[string]int `env:"MAP"`
		Port     int            `env:"PORT" default:"eighty"`
		Flag     bool           `env:"FLAG" required:"maybe"`
		Section  lbConfig       `env:"SECTION"`
		Dup      string         `env:"PORT"`
		Token    Secret         `env:"TOKEN"`
		TokenDup string         `env:"TOKEN_FILE"`
		Nested   struct {
			Port int `env:"PORT"`
		}
	}
	_, err := Fields(bad{})
	if err == nil {
		t.Fatal("Fields() succeeded, want an error")
	}
	for _, s := range []string{
		"field Map: type map[string]int cannot be set",
		`field Port: default: invalid int "eighty"`,
		`field Flag: required tag "maybe" is not a bool`,
		"field Section: env, default and required tags are not supported on a struct",
		"field Dup: environment variable PORT is also read by Port",
		"field TokenDup: environment variable TOKEN_FILE is also read by Token",
		"field Nested.Port: environment variable PORT is also read by Port",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Fields() error does not contain %q:\n%v", s, err)
		}
	}
	// Load refuses the struct too: its tags are programming errors.
	if err := Load(&bad{}, Source{LookupEnv: envOf(nil)}); err == nil {
		t.Error("Load() succeeded on a struct with bad tags")
	}
}

func TestFieldsArguments(t *testing.T) {
	for _, v := range []any{nil, 1, "s", []doConfig{}} {
		if _, err := Fields(v); err == nil {
			t.Errorf("Fields(%T) succeeded, want an error", v)
		}
	}
}

func TestMarkdown(t *testing.T) {
	type cfg struct {
		Token    Secret `json:"token" env:"X_TOKEN" required:"true" doc:"API token; see https://example.com/a|b."`
		Region   string `json:"region" env:"X_REGION" default:"eu-1" doc:"Region   slug."`
		Internal string `json:"internal"`
	}
	got, err := Markdown("Example cloud", cfg{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Example cloud\n\n" +
		"Settings come from the file named by `--cloud-config` and from environment variables; " +
		"an environment variable overrides the file. A secret can instead be read from the file named by " +
		"its variable with a `_FILE` suffix, which is re-read when it changes.\n\n" +
		"| Environment variable | Config file key | Type | Default | Required | Description |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `X_TOKEN`<br>`X_TOKEN_FILE` | `token` | secret |  | yes | API token; see https://example.com/a\\|b. |\n" +
		"| `X_REGION` | `region` | string | `eu-1` |  | Region slug. |\n" +
		"|  | `internal` | string |  |  |  |\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Markdown() mismatch (-want +got):\n%s", diff)
	}
}

func TestEnvMarkdown(t *testing.T) {
	type cfg struct {
		Token  Secret `json:"token" env:"X_TOKEN" required:"true" doc:"API token; see https://example.com/a|b."`
		Region string `json:"region" env:"X_REGION" default:"eu-1" doc:"Region   slug."`
		Limit  int    `json:"limit" env:"X_LIMIT" default:"7"`
	}
	got, err := EnvMarkdown("Example driver", "  Settings come from the environment; flags win.\n", cfg{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Example driver\n\n" +
		"Settings come from the environment; flags win.\n\n" +
		"A secret can instead be read from the file named by its variable with a `_FILE` suffix, " +
		"which is re-read when it changes.\n\n" +
		"| Environment variable | Type | Default | Required | Description |\n" +
		"|---|---|---|---|---|\n" +
		"| `X_TOKEN`<br>`X_TOKEN_FILE` | secret |  | yes | API token; see https://example.com/a\\|b. |\n" +
		"| `X_REGION` | string | `eu-1` |  | Region slug. |\n" +
		"| `X_LIMIT` | int | `7` |  |  |\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("EnvMarkdown() mismatch (-want +got):\n%s", diff)
	}
}

// TestEnvMarkdownWithoutSecretsOrIntro: no intro paragraph and no _FILE
// sentence when there is nothing to say.
func TestEnvMarkdownWithoutSecretsOrIntro(t *testing.T) {
	type cfg struct {
		Region string `json:"region" env:"X_REGION"`
	}
	got, err := EnvMarkdown("T", "", cfg{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# T\n\n| Environment variable | Type | Default | Required | Description |\n|---|---|---|---|---|\n| `X_REGION` | string |  |  |  |\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("EnvMarkdown() mismatch (-want +got):\n%s", diff)
	}
}

// TestEnvMarkdownRefusesFileOnlySettings: a setting no variable sets
// cannot appear in an environment-only reference; the error names it.
func TestEnvMarkdownRefusesFileOnlySettings(t *testing.T) {
	type cfg struct {
		Region   string `json:"region" env:"X_REGION"`
		Internal string `json:"internal"`
		Nested   struct {
			Key string `json:"key"`
		} `json:"nested"`
	}
	_, err := EnvMarkdown("T", "", cfg{})
	if err == nil || !strings.Contains(err.Error(), "internal") || !strings.Contains(err.Error(), "nested.key") {
		t.Fatalf("got %v, want an error naming internal and nested.key", err)
	}
	if _, err := EnvMarkdown("T", "", 1); err == nil {
		t.Error("EnvMarkdown(1) succeeded, want an error")
	}
}

// TestCellEscapesAngles: a placeholder in a description survives
// rendering; inside a code span it stays as written.
func TestCellEscapesAngles(t *testing.T) {
	got := cell("as k8s:<cluster ID>, or `k8s:<id>` | x")
	if want := "as k8s:&lt;cluster ID&gt;, or `k8s:<id>` \\| x"; got != want {
		t.Errorf("cell = %q, want %q", got, want)
	}
}
