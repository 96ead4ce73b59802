package charts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cloudMembers are the members of a values.schema.json that are a cloud's
// own: its title, its settings (env, OpenStack's cloud.conf, Triton's
// clusterName), what its Secret holds and the rules that tie them
// together. Everything else is the values ccmkit-common's templates read.
var cloudMembers = struct{ top, properties, secret []string }{
	top:        []string{"title", "required", "if", "then"},
	properties: []string{"env", "cloudConfig", "cloudConfigContents", "clusterName"},
	secret:     []string{"if", "then"},
}

// TestSchemasAgreeOnCommonValues: every chart's values.schema.json is the
// same but for its cloud's own members (cloudMembers). The charts render
// with the same library templates, so a common value one schema refuses,
// or checks differently, is a drift between charts, not a cloud's choice.
func TestSchemasAgreeOnCommonValues(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	first := commonSchema(t, dirs[0])
	for _, dir := range dirs[1:] {
		if diff := cmp.Diff(first, commonSchema(t, dir)); diff != "" {
			t.Errorf("%s and %s differ in values the library templates read (-%s +%s):\n%s",
				filepath.Base(dirs[0]), filepath.Base(dir), cloudOf(dirs[0]), cloudOf(dir), diff)
		}
	}
}

// commonSchema is the values.schema.json of the chart in dir without its
// cloud's own members.
func commonSchema(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	props := member(t, schema, "properties")
	secret := member(t, props, "secret")
	for _, k := range cloudMembers.top {
		delete(schema, k)
	}
	for _, k := range cloudMembers.properties {
		delete(props, k)
	}
	for _, k := range cloudMembers.secret {
		delete(secret, k)
	}
	delete(member(t, secret, "properties"), "data")
	return schema
}

// member is the object m holds under key.
func member(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("values.schema.json: %q is no object", key)
	}
	return v
}
