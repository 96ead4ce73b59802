package charts

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ccmkit/ccmkit/framework/config"
)

// TestCSIEnvValuesAreConfigVariables: the variables each chart's env
// value accepts are exactly the ones the driver reads (its CSIConfig,
// docs/<cloud>/csi-config.md) but the credentials, which the chart takes
// from its Secret, and their other names (csiChart.notEnv, each one the
// driver reads). A variable renamed or dropped in the driver fails here
// instead of being accepted at install and ignored; a new one fails until
// the chart offers it.
func TestCSIEnvValuesAreConfigVariables(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		fields, err := config.Fields(c.config)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, f := range fields {
			if f.Env != "" && f.SecretKey == "" && f.Type != "secret" && !slices.Contains(c.notEnv, f.Env) {
				want = append(want, f.Env)
			}
		}
		for _, name := range c.notEnv {
			if !slices.ContainsFunc(fields, func(f config.Field) bool { return f.Env == name }) {
				t.Errorf("notEnv %s: the driver reads no such variable", name)
			}
		}
		slices.Sort(want)
		got := schemaPropertyNames(t, c.dir(), "env")
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("env (-the driver's variables but credentials +the schema's), docs/%s/csi-config.md:\n%s", c.cloud, diff)
		}
	})
}

// TestCSIParametersAreDrivers: the StorageClass parameters each chart's
// schema accepts (storageClasses[].parameters) are exactly the ones the
// driver takes (its CSIParameters), and the VolumeSnapshotClass ones
// (volumeSnapshotClass.parameters) its CSISnapshotParameters; neither
// lists what the sidecars set themselves (csi.storage.k8s.io/pvc/name
// and the like, --extra-create-metadata), which a class must not. A
// documented family of parameters (Rancher's driverOpts.<key>) is a
// pattern of the schema's (patternProperties).
func TestCSIParametersAreDrivers(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		want := classParameters(c.parameters)
		got := schemaParameterNames(t, c.dir(), want, "storageClasses", "items", "parameters")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("storageClasses[].parameters (-the driver's +the schema's):\n%s", diff)
		}
		if c.snapshotParameters == nil {
			if schemaHas(t, c.dir(), "volumeSnapshotClass", "parameters") {
				t.Error("volumeSnapshotClass.parameters: the driver takes no VolumeSnapshotClass parameter")
			}
			return
		}
		got = schemaPropertyNames(t, c.dir(), "volumeSnapshotClass", "parameters")
		if diff := cmp.Diff(classParameters(c.snapshotParameters), got); diff != "" {
			t.Errorf("volumeSnapshotClass.parameters (-the driver's +the schema's):\n%s", diff)
		}
	})
}

// classParameters are the names a class may set of documented parameters
// (a key may list several, comma-separated): all but the
// csi.storage.k8s.io/ ones the sidecars add (csi.storage.k8s.io/fstype is
// the class's own).
func classParameters(documented map[string]string) []string {
	var names []string
	for key := range documented {
		for name := range strings.SplitSeq(key, ",") {
			name = strings.TrimSpace(name)
			if !strings.HasPrefix(name, "csi.storage.k8s.io/") || name == "csi.storage.k8s.io/fstype" {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// schemaParameterNames are the parameters the object schema at path
// accepts: its properties (schemaPropertyNames), and for each of its
// patternProperties the one documented family <prefix><key> it stands
// for: the one whose <prefix>key it matches, where neither <prefix> nor
// key alone matches.
func schemaParameterNames(t *testing.T, dir string, documented []string, path ...string) []string {
	t.Helper()
	names := schemaPropertyNames(t, dir, path...)
	patterns, _ := schemaAt(t, dir, path...)["patternProperties"].(map[string]any)
	for _, p := range slices.Sorted(maps.Keys(patterns)) {
		re, err := regexp.Compile(p)
		if err != nil {
			t.Errorf("%s patternProperties %s: %v", strings.Join(path, "."), p, err)
			continue
		}
		var families []string
		for _, d := range documented {
			if prefix, ok := strings.CutSuffix(d, "<key>"); ok && re.MatchString(prefix+"key") && !re.MatchString(prefix) && !re.MatchString("key") {
				families = append(families, d)
			}
		}
		if len(families) != 1 {
			t.Errorf("%s patternProperties %s stands for %d of the driver's families of parameters %q, want one", strings.Join(path, "."), p, len(families), families)
			names = append(names, p)
			continue
		}
		names = append(names, families[0])
	}
	slices.Sort(names)
	return names
}

// schemaPropertyNames are the properties the object schema at path lists
// (path names properties; "items" steps into an array's items), which
// must refuse any other (additionalProperties: false).
func schemaPropertyNames(t *testing.T, dir string, path ...string) []string {
	t.Helper()
	s := schemaAt(t, dir, path...)
	if s == nil {
		t.Fatalf("%s: no %s in values.schema.json", dir, strings.Join(path, "."))
	}
	if s["additionalProperties"] != false {
		t.Errorf("%s accepts what it does not list: want additionalProperties false", strings.Join(path, "."))
	}
	props, _ := s["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// schemaHas reports whether the chart's schema has the member at path.
func schemaHas(t *testing.T, dir string, path ...string) bool {
	t.Helper()
	return schemaAt(t, dir, path...) != nil
}

// schemaAt is the schema of the value at path; nil when there is none.
func schemaAt(t *testing.T, dir string, path ...string) map[string]any {
	t.Helper()
	s := readSchema(t, dir)
	for _, p := range path {
		if p == "items" {
			s, _ = s["items"].(map[string]any)
		} else {
			props, _ := s["properties"].(map[string]any)
			s, _ = props[p].(map[string]any)
		}
		if s == nil {
			return nil
		}
	}
	return s
}

func readSchema(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return s
}

// csiCloudMembers are the members of a CSI chart's values.schema.json
// that are the cloud's own, by path: its title, credentials and settings,
// the parameters its driver takes, DigitalOcean's udev rule remover.
// Everything else is read by ccmkit-common's CSI templates or written the
// same way in each chart.
var csiCloudMembers = [][]string{
	{"title"}, {"if"}, {"then"},
	{"properties", "secret"}, {"properties", "env"},
	{"properties", "cloudConfig"}, {"properties", "cloudConfigContents"}, {"properties", "clusterName"},
	{"properties", "node", "properties", "removeAutomountUdevRule"},
	{"properties", "node", "properties", "udevRuleRemoverImage"},
	{"properties", "node", "properties", "mdataGet"},
	{"properties", "node", "properties", "metadataDevice"},
	{"properties", "node", "properties", "volumesDir"},
	{"properties", "storageClasses", "items", "properties", "parameters"},
	{"properties", "volumeSnapshotClass", "properties", "parameters"},
}

// csiSnapshotMembers are the members only a chart whose driver has
// snapshots has.
var csiSnapshotMembers = [][]string{
	{"properties", "snapshotController"}, {"properties", "volumeSnapshotClass"},
	{"properties", "sidecars", "properties", "snapshotter"},
}

// csiBlockMembers are the members only a chart whose driver attaches and
// grows its volumes (not a shared filesystem's) has.
var csiBlockMembers = [][]string{
	{"properties", "sidecars", "properties", "attacher"},
	{"properties", "sidecars", "properties", "resizer"},
}

// TestCSISchemasAgreeOnCommonValues: every CSI chart's values.schema.json
// is the same but for its cloud's own members (csiCloudMembers), the
// snapshot ones (csiSnapshotMembers) where either driver has none, and
// the attacher's and resizer's (csiBlockMembers) where either driver's
// volumes are shared filesystems: the charts render with the same
// templates and values, so a common value one schema refuses or checks
// differently is a drift between charts.
func TestCSISchemasAgreeOnCommonValues(t *testing.T) {
	first := csiCharts[0]
	for _, c := range csiCharts[1:] {
		t.Run(c.cloud, func(t *testing.T) {
			snapshots, block := first.snapshots && c.snapshots, !first.shared && !c.shared
			if diff := cmp.Diff(commonCSISchema(t, first, snapshots, block), commonCSISchema(t, c, snapshots, block)); diff != "" {
				t.Errorf("%s and %s differ in values the charts share (-%s +%s):\n%s",
					first.dir(), c.dir(), first.cloud, c.cloud, diff)
			}
		})
	}
}

// commonCSISchema is c's schema without its cloud's members, without
// snapshots without the snapshot members, and without block (attach and
// expansion) without the attacher's and resizer's.
func commonCSISchema(t *testing.T, c csiChart, snapshots, block bool) map[string]any {
	t.Helper()
	s := readSchema(t, c.dir())
	drop := csiCloudMembers
	if !snapshots {
		drop = slices.Concat(drop, csiSnapshotMembers)
		for _, m := range []struct {
			path []string
			name string
		}{{[]string{"required"}, "snapshotController"}, {[]string{"required"}, "volumeSnapshotClass"},
			{[]string{"properties", "sidecars", "required"}, "snapshotter"}} {
			removeFromList(s, m.path, m.name)
		}
	}
	if !block {
		drop = slices.Concat(drop, csiBlockMembers)
		for _, name := range []string{"attacher", "resizer"} {
			removeFromList(s, []string{"properties", "sidecars", "required"}, name)
		}
	}
	for _, path := range drop {
		parent := s
		for _, p := range path[:len(path)-1] {
			parent, _ = parent[p].(map[string]any)
		}
		delete(parent, path[len(path)-1])
	}
	return s
}

// removeFromList removes name from the list at path in s, if it is there.
func removeFromList(s map[string]any, path []string, name string) {
	parent := s
	for _, p := range path[:len(path)-1] {
		parent, _ = parent[p].(map[string]any)
	}
	key := path[len(path)-1]
	l, _ := parent[key].([]any)
	parent[key] = slices.DeleteFunc(slices.Clone(l), func(v any) bool { return v == name })
}
