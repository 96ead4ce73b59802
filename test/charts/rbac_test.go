package charts

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/releaseutil"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// rbacKinds are the kinds the RBAC check compares.
var rbacKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// rbacObject is what the RBAC check compares of an object: labels and
// annotations are left out; rules are compared as sets (their order and
// the order within each rule's lists grant nothing).
type rbacObject struct {
	Kind, Namespace, Name string
	Rules                 []rbacv1.PolicyRule
	RoleRef               *rbacv1.RoleRef
	Subjects              []rbacv1.Subject
}

// TestRBACMatchesManifests renders every chart at its default values in
// kube-system and requires its ServiceAccount, ClusterRoles, Roles and
// bindings to be those of examples/manifests/<cloud>/rbac.yaml: the
// manifests are the reviewed, end-to-end tested least privilege, and the
// chart may not drift from them.
func TestRBACMatchesManifests(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(cloudOf(dir), func(t *testing.T) {
			chart, manifest := rbacOfChartAndManifest(t, dir)
			if diff := rbacDiff(chart, manifest); diff != "" {
				t.Errorf("the chart's RBAC differs from %s (-chart +manifest):\n%s", manifestOf(dir), diff)
			}
		})
	}
}

// TestRBACCheckFailsOnDrift shows the check above can fail: against a
// copy of each manifest with one verb removed, or one binding left out,
// the chart's RBAC differs.
func TestRBACCheckFailsOnDrift(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(cloudOf(dir), func(t *testing.T) {
			chart, manifest := rbacOfChartAndManifest(t, dir)
			fewerVerbs := slices.Clone(manifest)
			i := slices.IndexFunc(fewerVerbs, func(o rbacObject) bool { return o.Kind == "ClusterRole" && len(o.Rules) > 0 })
			if i < 0 {
				t.Fatalf("%s has no ClusterRole with rules", manifestOf(dir))
			}
			rules := slices.Clone(fewerVerbs[i].Rules)
			rules[0].Verbs = rules[0].Verbs[1:]
			fewerVerbs[i].Rules = rules
			if rbacDiff(chart, fewerVerbs) == "" {
				t.Errorf("no difference found with a verb removed from %s", fewerVerbs[i].Name)
			}
			j := slices.IndexFunc(manifest, func(o rbacObject) bool { return o.Kind == "ClusterRoleBinding" })
			if rbacDiff(chart, slices.Delete(slices.Clone(manifest), j, j+1)) == "" {
				t.Errorf("no difference found with %s left out", manifest[j].Name)
			}
		})
	}
}

func manifestOf(chartDir string) string {
	return filepath.Join("../../examples/manifests", cloudOf(chartDir), "rbac.yaml")
}

// rbacOfChartAndManifest renders the chart in dir at its default values
// in kube-system and returns its RBAC objects and those of the cloud's
// shipped rbac.yaml.
func rbacOfChartAndManifest(t *testing.T, dir string) (chart, manifest []rbacObject) {
	t.Helper()
	objs, err := renderChart(dir, renderOptions{Name: filepath.Base(dir), Namespace: "kube-system", Values: requiredValues(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	if chart, err = rbacObjects(objs, "kube-system"); err != nil {
		t.Fatal(err)
	}
	shipped, err := readManifests(manifestOf(dir))
	if err != nil {
		t.Fatal(err)
	}
	if manifest, err = rbacObjects(shipped, ""); err != nil {
		t.Fatalf("%s: %v", manifestOf(dir), err)
	}
	if len(manifest) == 0 {
		t.Fatalf("%s holds no RBAC objects", manifestOf(dir))
	}
	return chart, manifest
}

// rbacObjects picks the RBAC objects of objs, sorted; a namespaced one
// without a namespace is in ns, as Helm installs it.
func rbacObjects(objs []*unstructured.Unstructured, ns string) ([]rbacObject, error) {
	var out []rbacObject
	for _, u := range objs {
		if !slices.Contains(rbacKinds, u.GetKind()) {
			continue
		}
		o, err := toRBACObject(u)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if o.Namespace == "" && (o.Kind == "ServiceAccount" || o.Kind == "Role" || o.Kind == "RoleBinding") {
			o.Namespace = ns
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b rbacObject) int {
		return strings.Compare(a.Kind+"/"+a.Namespace+"/"+a.Name, b.Kind+"/"+b.Namespace+"/"+b.Name)
	})
	return out, nil
}

func toRBACObject(u *unstructured.Unstructured) (rbacObject, error) {
	o := rbacObject{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	conv := runtime.DefaultUnstructuredConverter
	switch o.Kind {
	case "ClusterRole":
		var r rbacv1.ClusterRole
		if err := conv.FromUnstructuredWithValidation(u.Object, &r, true); err != nil {
			return o, err
		}
		o.Rules = normalizeRules(r.Rules)
	case "Role":
		var r rbacv1.Role
		if err := conv.FromUnstructuredWithValidation(u.Object, &r, true); err != nil {
			return o, err
		}
		o.Rules = normalizeRules(r.Rules)
	case "ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		if err := conv.FromUnstructuredWithValidation(u.Object, &b, true); err != nil {
			return o, err
		}
		o.RoleRef, o.Subjects = &b.RoleRef, b.Subjects
	case "RoleBinding":
		var b rbacv1.RoleBinding
		if err := conv.FromUnstructuredWithValidation(u.Object, &b, true); err != nil {
			return o, err
		}
		o.RoleRef, o.Subjects = &b.RoleRef, b.Subjects
	}
	return o, nil
}

// normalizeRules sorts each rule's lists and then the rules.
func normalizeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rules))
	for i, r := range rules {
		for _, l := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
			slices.Sort(l)
		}
		out[i] = r
	}
	slices.SortFunc(out, func(a, b rbacv1.PolicyRule) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// rbacDiff is "" when chart and manifest hold the same RBAC objects.
func rbacDiff(chart, manifest []rbacObject) string {
	return cmp.Diff(chart, manifest)
}

// readManifests decodes every object of a multi-document YAML file, as
// Helm splits a template's output.
func readManifests(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs := releaseutil.SplitManifests(string(b))
	keys := slices.Sorted(maps.Keys(docs))
	var objs []*unstructured.Unstructured
	for _, k := range keys {
		js, err := yaml.YAMLToJSON([]byte(docs[k]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if string(js) == "null" { // comments only
			continue
		}
		obj, err := decodeObject([]byte(docs[k]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}
