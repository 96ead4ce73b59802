package charts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// valueSet is one way of installing a chart: its default values, or a
// values file of testdata/values/<chart>/.
type valueSet struct {
	Name   string
	Values map[string]any
}

// valueSets are the chart's default values and every non-default set in
// testdata/values/<chart>/*.yaml (each chart has at least one), each over
// the values the chart requires (requiredValues).
func valueSets(t *testing.T, chartDir string) []valueSet {
	t.Helper()
	required := requiredValues(t, chartDir)
	files, err := filepath.Glob(filepath.Join("testdata/values", filepath.Base(chartDir), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no non-default values for %s in testdata/values/%s", chartDir, filepath.Base(chartDir))
	}
	sets := []valueSet{{Name: "default", Values: required}}
	for _, f := range files {
		v, err := readValues(f)
		if err != nil {
			t.Fatal(err)
		}
		all := maps.Clone(required)
		maps.Copy(all, v)
		sets = append(sets, valueSet{Name: strings.TrimSuffix(filepath.Base(f), ".yaml"), Values: all})
	}
	return sets
}

// requiredValues are what a chart requires besides its defaults (Triton's
// clusterName), from testdata/required/<chart>.yaml: empty when there is
// no such file.
func requiredValues(t *testing.T, chartDir string) map[string]any {
	t.Helper()
	v, err := readValues(filepath.Join("testdata/required", filepath.Base(chartDir)+".yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRender renders every chart with each of its value sets and checks
// the objects carry what the values ask for.
func TestRender(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for _, set := range valueSets(t, dir) {
			t.Run(cloudOf(dir)+"/"+set.Name, func(t *testing.T) {
				objs, err := renderChart(dir, renderOptions{Name: filepath.Base(dir), Namespace: "kube-system", Values: set.Values})
				if err != nil {
					t.Fatal(err)
				}
				checkValuesApplied(t, effectiveValues(t, dir, set.Values), objs)
			})
		}
	}
}

// effectiveValues are values over the chart's defaults, merged as Helm
// merges them (maps key by key).
func effectiveValues(t *testing.T, dir string, values map[string]any) map[string]any {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := chartutil.CoalesceValues(ch, values)
	if err != nil {
		t.Fatal(err)
	}
	return v.AsMap()
}

// badValue is values a chart's schema must refuse, with what the error
// must name.
type badValue struct {
	name   string
	values map[string]any
	want   []string
}

// badValues are values every chart's schema must refuse.
var badValues = []badValue{
	{"misspelt key", map[string]any{"replicaCont": 1}, []string{"replicaCont"}},
	{"wrong enum", map[string]any{"kind": "StatefulSet"}, []string{"/kind", "Deployment", "DaemonSet"}},
	{"wrong type", map[string]any{"replicaCount": "two"}, []string{"/replicaCount", "integer"}},
	{"misspelt nested key", map[string]any{"metrics": map[string]any{"servicemonitor": map[string]any{"enabled": true}}}, []string{"servicemonitor"}},
}

// TestBadValuesFail: a value the schema does not allow fails the install
// with the schema's error, as `helm install` fails.
func TestBadValuesFail(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for _, bad := range badValues {
			t.Run(cloudOf(dir)+"/"+bad.name, func(t *testing.T) { checkRefused(t, dir, bad) })
		}
	}
}

// checkRefused checks that dir's chart refuses bad with its schema's
// error, naming what bad.want names.
func checkRefused(t *testing.T, dir string, bad badValue) {
	t.Helper()
	_, err := renderChart(dir, renderOptions{Name: filepath.Base(dir), Namespace: "kube-system", Values: bad.values})
	if err == nil {
		t.Fatalf("values %v rendered", bad.values)
	}
	if !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
		t.Errorf("not the schema's error: %v", err)
	}
	for _, w := range bad.want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not name %q: %v", w, err)
		}
	}
}

// checkValuesApplied checks objs against the values shared by every
// chart: the workload kind and replicas (one replica: no leader election),
// the created Secret's data, the metrics Service and ServiceMonitor, extra
// arguments and environment, and resources.
func checkValuesApplied(t *testing.T, values map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	kind, _ := values["kind"].(string)
	if kind == "" {
		kind = "Deployment"
	}
	workload := only(t, objs, "Deployment", "DaemonSet")
	if workload.GetKind() != kind {
		t.Fatalf("a %s, want a %s", workload.GetKind(), kind)
	}
	c := ccmContainer(t, workload)
	if n, ok := values["replicaCount"]; ok && kind == "Deployment" {
		got, _, _ := unstructured.NestedInt64(workload.Object, "spec", "replicas")
		if fmt.Sprint(got) != fmt.Sprint(n) {
			t.Errorf("replicas %d, want %v", got, n)
		}
		if fmt.Sprint(n) == "1" && !slices.Contains(c.Args, "--leader-elect=false") {
			t.Errorf("one replica without --leader-elect=false: %q", c.Args)
		}
	}
	extraArgs, _ := values["extraArgs"].([]any)
	for _, a := range extraArgs {
		if !slices.Contains(c.Args, fmt.Sprint(a)) {
			t.Errorf("extra argument %v missing from %q", a, c.Args)
		}
	}
	extraEnv, _ := values["extraEnv"].([]any)
	for _, e := range extraEnv {
		m, _ := e.(map[string]any)
		if !slices.ContainsFunc(c.Env, func(v corev1.EnvVar) bool { return v.Name == m["name"] && v.Value == m["value"] }) {
			t.Errorf("extra environment %v missing from %v", m, c.Env)
		}
	}
	if res, ok := values["resources"]; ok {
		if diff := cmp.Diff(jsonOf(t, res), jsonOf(t, c.Resources)); diff != "" {
			t.Errorf("resources (-values +container):\n%s", diff)
		}
	}
	checkSecret(t, values, objs)
	checkMetrics(t, values, objs)
}

// checkSecret: with secret.create, a Secret named secret.name holds every
// value of secret.data.
func checkSecret(t *testing.T, values map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	secret, _ := values["secret"].(map[string]any)
	if create, _ := secret["create"].(bool); !create {
		return
	}
	s := find(objs, "Secret", fmt.Sprint(secret["name"]))
	if s == nil {
		t.Fatalf("secret.create and no Secret %v", secret["name"])
	}
	held := map[string]bool{}
	str, _, _ := unstructured.NestedStringMap(s.Object, "stringData")
	for _, v := range str {
		held[v] = true
	}
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")
	for _, v := range data {
		held[decodeBase64(t, v)] = true
	}
	want, _ := secret["data"].(map[string]any)
	for k, v := range want {
		if s, ok := v.(string); ok && s != "" && !held[s] {
			t.Errorf("secret.data.%s is not in the Secret", k)
		}
	}
}

// checkMetrics: metrics.service.enabled gives a Service on the secure
// port (securePort); metrics.serviceMonitor.enabled a ServiceMonitor.
func checkMetrics(t *testing.T, values map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	metrics, _ := values["metrics"].(map[string]any)
	svc, _ := metrics["service"].(map[string]any)
	if on, _ := svc["enabled"].(bool); on {
		s := only(t, objs, "Service")
		ports, _, _ := unstructured.NestedSlice(s.Object, "spec", "ports")
		port := fmt.Sprintf("port:%v ", values["securePort"])
		if !strings.Contains(fmt.Sprint(ports), port) {
			t.Errorf("metrics Service ports %v, want the secure port %v", ports, values["securePort"])
		}
	} else if find(objs, "Service", "") != nil {
		t.Error("a Service without metrics.service.enabled")
	}
	sm, _ := metrics["serviceMonitor"].(map[string]any)
	on, _ := sm["enabled"].(bool)
	if got := find(objs, "ServiceMonitor", "") != nil; got != on {
		t.Errorf("ServiceMonitor rendered: %v, metrics.serviceMonitor.enabled: %v", got, on)
	}
}

func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
