package charts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// chartsDir holds the charts, relative to this package.
const chartsDir = "../../charts"

// chartDirs lists the cloud charts: charts/<cloud>-cloud-controller-manager
// (charts/ccmkit-common is a library chart, not installable).
func chartDirs() ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(chartsDir, "*-cloud-controller-manager"))
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no charts in %s", chartsDir)
	}
	return dirs, nil
}

// cloudOf is the cloud a chart directory is for.
func cloudOf(chartDir string) string {
	return strings.TrimSuffix(filepath.Base(chartDir), "-cloud-controller-manager")
}

// renderOptions are what `helm install NAME CHART -n NAMESPACE -f ...`
// is given.
type renderOptions struct {
	Name, Namespace string
	Values          map[string]any
}

// renderChart renders the chart in dir as `helm install` does before it
// talks to the cluster (action.Install's steps, without its release
// storage and cluster client): the chart loaded with its dependencies
// (charts/ccmkit-common through its symlink), dependency conditions and
// import-values processed, the values coalesced with the chart's and
// validated against every values.schema.json, the templates rendered, and
// the manifests split and sorted in Helm's install order. Hooks are an
// error: no ccmkit chart has any, and this test would not run them.
func renderChart(dir string, o renderOptions) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	files, err := renderFiles(ch, o)
	if err != nil {
		return nil, err
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("%s: %d hooks (first %s): not supported", dir, len(hooks), hooks[0].Path)
	}
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		obj, err := decodeObject([]byte(m.Content))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// renderFiles renders ch's templates with o's values, as action.Install
// does, without NOTES.txt.
func renderFiles(ch *chart.Chart, o renderOptions) (map[string]string, error) {
	if ch.Metadata.Type == "library" {
		return nil, errors.New("a library chart is not installable")
	}
	if err := checkDependencies(ch); err != nil {
		return nil, err
	}
	vals := o.Values
	if vals == nil {
		vals = map[string]any{}
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	// The test API server serves the ServiceMonitor CRD (testdata/crds).
	caps.APIVersions = append(caps.APIVersions, "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor")
	rel := chartutil.ReleaseOptions{Name: o.Name, Namespace: o.Namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(ch, vals, rel, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	return files, nil
}

// checkDependencies fails, as action.Install's CheckDependencies does,
// when a dependency in Chart.yaml is not in the chart's charts/ directory
// (a broken ccmkit-common symlink). It is not imported from pkg/action,
// whose dependencies (kubectl, registry clients) would more than double
// this package's build.
func checkDependencies(ch *chart.Chart) error {
	loaded := map[string]bool{}
	for _, d := range ch.Dependencies() {
		loaded[d.Name()] = true
	}
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !loaded[d.Name] {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	return nil
}

// decodeObject decodes one YAML document into an object; it must have an
// apiVersion, a kind and a name.
func decodeObject(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	if obj.GetName() == "" {
		return nil, fmt.Errorf("%s without a name", obj.GetKind())
	}
	return obj, nil
}

// readValues reads a values file as `helm install -f` does.
func readValues(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := chartutil.ReadValues(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v.AsMap(), nil
}
