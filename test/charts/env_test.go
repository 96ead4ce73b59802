package charts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// TestEnvValuesAreConfigVariables: every variable a chart's env value
// accepts (its values.schema.json) is one the cloud's CCM reads (the
// provider's config struct, docs/<cloud>/config.md), and none is one the
// chart takes from its Secret. A variable renamed or dropped in the
// provider fails here, instead of being accepted at install and ignored
// by the CCM.
func TestEnvValuesAreConfigVariables(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(cloudOf(dir), func(t *testing.T) {
			fields := configFields(t, cloudOf(dir))
			for _, name := range envValueNames(t, dir) {
				i := slices.IndexFunc(fields, func(f config.Field) bool { return f.Env == name })
				switch {
				case i < 0:
					t.Errorf("env.%s: the %s CCM reads no such variable (docs/%s/config.md)", name, cloudOf(dir), cloudOf(dir))
				case fields[i].SecretKey != "" || fields[i].Type == "secret":
					t.Errorf("env.%s: a credential, which the chart takes from its Secret", name)
				}
			}
		})
	}
}

// configFields are the settings of the config struct of the provider
// called cloud.
func configFields(t *testing.T, cloud string) []config.Field {
	t.Helper()
	p, ok := cluster.Lookup(cloud)
	if !ok {
		t.Fatalf("no provider %q", cloud)
	}
	c, ok := p.New().(framework.Configurable)
	if !ok {
		t.Fatalf("provider %q has no config", cloud)
	}
	fields, err := config.Fields(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

// envValueNames are the variables the env value of the chart in dir
// accepts, as its values.schema.json lists them.
func envValueNames(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Env struct {
				AdditionalProperties *bool                      `json:"additionalProperties"`
				Properties           map[string]json.RawMessage `json:"properties"`
			} `json:"env"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	env := schema.Properties.Env
	if env.AdditionalProperties == nil || *env.AdditionalProperties {
		t.Errorf("the env value accepts variables it does not list: want additionalProperties false")
	}
	names := make([]string, 0, len(env.Properties))
	for name := range env.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
