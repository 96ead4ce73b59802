package charts

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
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
// from its Secret. A variable renamed or dropped in the driver fails here
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
			if f.Env != "" && f.SecretKey == "" && f.Type != "secret" {
				want = append(want, f.Env)
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
// and the like, --extra-create-metadata), which a class must not.
func TestCSIParametersAreDrivers(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		got := schemaPropertyNames(t, c.dir(), "storageClasses", "items", "parameters")
		if diff := cmp.Diff(classParameters(c.parameters), got); diff != "" {
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
	{"properties", "storageClasses", "items", "properties", "parameters"},
	{"properties", "volumeSnapshotClass", "properties", "parameters"},
}

// csiSnapshotMembers are the members only a chart whose driver has
// snapshots has.
var csiSnapshotMembers = [][]string{
	{"properties", "snapshotController"}, {"properties", "volumeSnapshotClass"},
	{"properties", "sidecars", "properties", "snapshotter"},
}

// TestCSISchemasAgreeOnCommonValues: every CSI chart's values.schema.json
// is the same but for its cloud's own members (csiCloudMembers), and the
// snapshot ones (csiSnapshotMembers) where either driver has none: the
// charts render with the same templates and values, so a common value
// one schema refuses or checks differently is a drift between charts.
func TestCSISchemasAgreeOnCommonValues(t *testing.T) {
	first := csiCharts[0]
	for _, c := range csiCharts[1:] {
		t.Run(c.cloud, func(t *testing.T) {
			snapshots := first.snapshots && c.snapshots
			if diff := cmp.Diff(commonCSISchema(t, first, snapshots), commonCSISchema(t, c, snapshots)); diff != "" {
				t.Errorf("%s and %s differ in values the charts share (-%s +%s):\n%s",
					first.dir(), c.dir(), first.cloud, c.cloud, diff)
			}
		})
	}
}

// commonCSISchema is c's schema without its cloud's members and, without
// snapshots, without the snapshot members.
func commonCSISchema(t *testing.T, c csiChart, snapshots bool) map[string]any {
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
