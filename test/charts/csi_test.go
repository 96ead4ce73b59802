package charts

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
)

// The DigitalOcean CSI driver's chart is tested on its own: it is not a
// CCM chart (chartDirs), and its objects are those of
// examples/manifests/digitalocean/csi, which it must render at its
// defaults, RBAC included.
const (
	csiChartDir  = chartsDir + "/digitalocean-csi-driver"
	csiManifests = "../../examples/manifests/digitalocean/csi"
	// csiCRDs is the manifests' CRD file, which the chart ships in crds/.
	csiCRDs = csiManifests + "/crds.yaml"
	// csiImage is the driver's image without its tag.
	csiImage = "ghcr.io/ccmkit/digitalocean-csi-driver"
)

// renderCSI renders the CSI chart with values in ns.
func renderCSI(t *testing.T, ns string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChart(csiChartDir, renderOptions{Name: "digitalocean-csi-driver", Namespace: ns, Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestCSIChartMatchesManifests renders the chart at its default values in
// kube-system and requires every object to be the manifests' (every file
// of examples/manifests/digitalocean/csi but crds.yaml), field for field:
// only the objects' own labels (the chart adds Helm's) and the driver's
// image tag (the manifests say <version>) may differ.
func TestCSIChartMatchesManifests(t *testing.T) {
	chart := csiObjectsByKey(t, renderCSI(t, "kube-system", nil))
	manifest := csiObjectsByKey(t, csiManifestObjects(t))
	for _, key := range slices.Sorted(maps.Keys(manifest)) {
		got, ok := chart[key]
		if !ok {
			t.Errorf("%s: in the manifests, not rendered by the chart", key)
			continue
		}
		if diff := cmp.Diff(manifest[key], got); diff != "" {
			t.Errorf("%s differs (-manifest +chart):\n%s", key, diff)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(chart)) {
		if _, ok := manifest[key]; !ok {
			t.Errorf("%s: rendered by the chart, not in the manifests", key)
		}
	}
}

// csiManifestObjects are the objects of the CSI manifests but the CRDs.
func csiManifestObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(csiManifests, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if f == filepath.Clean(csiCRDs) {
			continue
		}
		o, err := readManifests(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	return objs
}

// csiObjectsByKey keys objs by kind, namespace and name, without their
// labels and with the driver's image tag replaced by TAG; a key twice
// fails t.
func csiObjectsByKey(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, o := range objs {
		key := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		if _, dup := out[key]; dup {
			t.Fatalf("%s twice", key)
		}
		o = o.DeepCopy()
		unstructured.RemoveNestedField(o.Object, "metadata", "labels")
		for _, field := range []string{"containers", "initContainers"} {
			path := []string{"spec", "template", "spec", field}
			cs, found, _ := unstructured.NestedSlice(o.Object, path...)
			if !found {
				continue
			}
			for _, c := range cs {
				m := c.(map[string]any)
				if img, _ := m["image"].(string); strings.HasPrefix(img, csiImage+":") {
					m["image"] = csiImage + ":TAG"
				}
			}
			if err := unstructured.SetNestedSlice(o.Object, cs, path...); err != nil {
				t.Fatal(err)
			}
		}
		out[key] = o.Object
	}
	return out
}

// TestCSIChartMatchesManifestsFailsOnDrift shows the comparison above can
// fail: a sidecar argument changed in the manifests' objects is found.
func TestCSIChartMatchesManifestsFailsOnDrift(t *testing.T) {
	manifest := csiObjectsByKey(t, csiManifestObjects(t))
	chart := csiObjectsByKey(t, renderCSI(t, "kube-system", nil))
	key := "StatefulSet kube-system/csi-do-controller"
	sts := manifest[key]
	cs, _, _ := unstructured.NestedSlice(sts, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["args"] = []any{"--csi-address=/elsewhere"}
	if err := unstructured.SetNestedSlice(sts, cs, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if cmp.Diff(sts, chart[key]) == "" {
		t.Error("no difference found with the provisioner's arguments changed")
	}
}

// TestCSIRBACMatchesManifests: the chart's ServiceAccounts, roles and
// bindings at its defaults in kube-system are those of the manifests'
// rbac.yaml, compared as the CCM charts' are (TestRBACMatchesManifests);
// and that check finds a verb removed or a binding left out.
func TestCSIRBACMatchesManifests(t *testing.T) {
	chart, err := rbacObjects(renderCSI(t, "kube-system", nil), "kube-system")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := readManifests(filepath.Join(csiManifests, "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := rbacObjects(shipped, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := rbacDiff(chart, manifest); diff != "" {
		t.Errorf("the chart's RBAC differs from %s/rbac.yaml (-chart +manifest):\n%s", csiManifests, diff)
	}
	// Every ServiceAccount the workloads run as is in rbac.yaml.
	for _, o := range csiManifestObjects(t) {
		if sa, found, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName"); found &&
			!slices.ContainsFunc(manifest, func(r rbacObject) bool { return r.Kind == "ServiceAccount" && r.Name == sa }) {
			t.Errorf("%s %s runs as %s, which rbac.yaml does not create", o.GetKind(), o.GetName(), sa)
		}
	}

	i := slices.IndexFunc(manifest, func(o rbacObject) bool { return o.Kind == "ClusterRole" && len(o.Rules) > 0 })
	fewerVerbs := slices.Clone(manifest)
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
}

// TestCSIChartCRDs: the chart installs (crds/) exactly the manifests'
// snapshot CRDs.
func TestCSIChartCRDs(t *testing.T) {
	ch, err := loader.Load(csiChartDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range ch.CRDObjects() {
		got = append(got, string(f.File.Data))
	}
	want, err := readFile(csiCRDs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{want}, got); diff != "" {
		t.Errorf("the chart's CRDs differ from %s (-manifests +chart):\n%s", csiCRDs, diff)
	}
	crds, err := readManifests(csiCRDs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.GetName())
	}
	slices.Sort(names)
	wantNames := []string{
		"volumesnapshotclasses.snapshot.storage.k8s.io",
		"volumesnapshotcontents.snapshot.storage.k8s.io",
		"volumesnapshots.snapshot.storage.k8s.io",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("CRDs (-want +got):\n%s", diff)
	}
}

// TestCSIDryRunApply installs the chart's CRDs (as helm install does
// before the templates) and applies every object the chart renders, for
// its defaults in kube-system and each set of testdata/values in another
// namespace, with server-side apply, strict field validation and dryRun:
// All.
func TestCSIDryRunApply(t *testing.T) {
	cp, api := controlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNamespace}}
	if _, err := cp.AdminClient().CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crds, err := readManifests(filepath.Join(csiChartDir, "crds", "snapshot-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.installCRDs(t.Context(), crds); err != nil {
		t.Fatal(err)
	}
	for _, set := range valueSets(t, csiChartDir) {
		namespace := otherNamespace
		if set.Name == "default" {
			namespace = "kube-system"
		}
		t.Run(set.Name, func(t *testing.T) {
			for _, obj := range renderCSI(t, namespace, set.Values) {
				if err := api.apply(t.Context(), obj, namespace, true); err != nil {
					t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
		})
	}
}

// TestCSIRender renders the chart with each value set and checks the
// objects carry what the values ask for.
func TestCSIRender(t *testing.T) {
	for _, set := range valueSets(t, csiChartDir) {
		t.Run(set.Name, func(t *testing.T) {
			objs := renderCSI(t, "kube-system", set.Values)
			checkCSIValues(t, effectiveValues(t, csiChartDir, set.Values), objs)
		})
	}
}

// checkCSIValues checks objs against values: the workloads and their
// replicas, the driver's arguments and environment, the kubelet
// directory, the optional snapshot-controller, udev init container,
// Secret and VolumeSnapshotClass, and the StorageClasses.
func checkCSIValues(t *testing.T, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	get := func(path ...string) any {
		val, _, _ := unstructured.NestedFieldNoCopy(v, path...)
		return val
	}
	sts := csiStatefulSet(t, objs)
	if got, want := fmt.Sprint(*sts.Spec.Replicas), fmt.Sprint(get("controller", "replicas")); got != want {
		t.Errorf("controller replicas %s, want %s", got, want)
	}
	ds := csiDaemonSet(t, objs)
	ctrl := container(t, sts.Spec.Template.Spec, "csi-do-plugin")
	node := container(t, ds.Spec.Template.Spec, "csi-do-plugin")
	for _, c := range []struct {
		name string
		c    corev1.Container
		mode string
		key  string
	}{{"controller", ctrl, "--mode=controller", "controller"}, {"node", node, "--mode=node", "node"}} {
		if !slices.Contains(c.c.Args, c.mode) {
			t.Errorf("%s driver args %q lack %s", c.name, c.c.Args, c.mode)
		}
		var extra []string
		for _, a := range asSlice(get(c.key, "extraArgs")) {
			extra = append(extra, fmt.Sprint(a))
		}
		if n := len(c.c.Args); n < len(extra) || !slices.Equal(c.c.Args[n-len(extra):], extra) {
			t.Errorf("%s driver args %q do not end with extraArgs %q", c.name, c.c.Args, extra)
		}
		env, _ := get("env").(map[string]any)
		for name, val := range env {
			want := fmt.Sprint(val)
			has := slices.ContainsFunc(c.c.Env, func(e corev1.EnvVar) bool { return e.Name == name && e.Value == want })
			if val != nil && want != "" && !has {
				t.Errorf("%s driver env lacks %s=%s: %v", c.name, name, want, c.c.Env)
			}
			if (val == nil || want == "") && slices.ContainsFunc(c.c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
				t.Errorf("%s driver env sets %s, empty in env", c.name, name)
			}
		}
	}
	kubelet := strings.TrimSuffix(fmt.Sprint(get("node", "kubeletDir")), "/")
	wantReg := "--kubelet-registration-path=" + kubelet + "/plugins/" + digitalocean.CSIDriverName + "/csi.sock"
	if reg := container(t, ds.Spec.Template.Spec, "csi-node-driver-registrar"); !slices.Contains(reg.Args, wantReg) {
		t.Errorf("registrar args %q lack %s", reg.Args, wantReg)
	}
	if !slices.ContainsFunc(node.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.MountPath == kubelet && m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationBidirectional
	}) {
		t.Errorf("the node plugin does not mount %s with Bidirectional propagation: %v", kubelet, node.VolumeMounts)
	}
	if got, want := len(ds.Spec.Template.Spec.InitContainers) == 1, get("node", "removeAutomountUdevRule") == true; got != want {
		t.Errorf("udev init container rendered: %v, node.removeAutomountUdevRule: %v", got, want)
	}
	onOff := []struct {
		what, kind, name string
		on               bool
	}{
		{"snapshotController.enabled", "Deployment", "snapshot-controller", get("snapshotController", "enabled") == true},
		{"volumeSnapshotClass.create", "VolumeSnapshotClass", fmt.Sprint(get("volumeSnapshotClass", "name")), get("volumeSnapshotClass", "create") == true},
		{"secret.create", "Secret", fmt.Sprint(get("secret", "name")), get("secret", "create") == true},
	}
	for _, o := range onOff {
		if got := find(objs, o.kind, o.name) != nil; got != o.on {
			t.Errorf("%s %s rendered: %v, %s: %v", o.kind, o.name, got, o.what, o.on)
		}
	}
	checkSecret(t, v, objs)
	checkStorageClasses(t, v, objs)
}

// checkStorageClasses: one StorageClass per storageClasses entry, with its
// provisioner, parameters and default-class annotation.
func checkStorageClasses(t *testing.T, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	var names []string
	for _, c := range asSlice(v["storageClasses"]) {
		m := c.(map[string]any)
		name := fmt.Sprint(m["name"])
		names = append(names, name)
		sc := find(objs, "StorageClass", name)
		if sc == nil {
			t.Errorf("StorageClass %s not rendered", name)
			continue
		}
		if p, _, _ := unstructured.NestedString(sc.Object, "provisioner"); p != digitalocean.CSIDriverName {
			t.Errorf("StorageClass %s: provisioner %q", name, p)
		}
		params, _, _ := unstructured.NestedStringMap(sc.Object, "parameters")
		want := map[string]string{}
		if p, ok := m["parameters"].(map[string]any); ok {
			for k, val := range p {
				want[k] = fmt.Sprint(val)
			}
		}
		if diff := cmp.Diff(want, params, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("StorageClass %s parameters (-values +object):\n%s", name, diff)
		}
		isDefault := sc.GetAnnotations()["storageclass.kubernetes.io/is-default-class"] == "true"
		if isDefault != (m["default"] == true) {
			t.Errorf("StorageClass %s: default class %v, values say %v", name, isDefault, m["default"])
		}
	}
	var rendered []string
	for _, o := range objs {
		if o.GetKind() == "StorageClass" {
			rendered = append(rendered, o.GetName())
		}
	}
	slices.Sort(names)
	slices.Sort(rendered)
	if diff := cmp.Diff(names, rendered, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("StorageClasses (-values +rendered):\n%s", diff)
	}
}

func csiStatefulSet(t *testing.T, objs []*unstructured.Unstructured) appsv1.StatefulSet {
	t.Helper()
	var s appsv1.StatefulSet
	fromUnstructured(t, find(objs, "StatefulSet", "csi-do-controller"), &s)
	return s
}

func csiDaemonSet(t *testing.T, objs []*unstructured.Unstructured) appsv1.DaemonSet {
	t.Helper()
	var d appsv1.DaemonSet
	fromUnstructured(t, find(objs, "DaemonSet", "csi-do-node"), &d)
	return d
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if u == nil {
		t.Fatalf("no %T rendered", into)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// container is spec's container called name.
func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no container %s", name)
	}
	return spec.Containers[i]
}

// csiBadValues are values the CSI chart's schema must refuse.
var csiBadValues = []badValue{
	{"misspelt key", map[string]any{"controler": map[string]any{"replicas": 1}}, []string{"controler"}},
	{"misspelt nested key", map[string]any{"controller": map[string]any{"replica": 1}}, []string{"replica"}},
	{"wrong type", map[string]any{"controller": map[string]any{"replicas": "two"}}, []string{"/controller/replicas", "integer"}},
	{"unknown variable", map[string]any{"env": map[string]any{"DO_REGION": "nyc3"}}, []string{"DO_REGION"}},
	{"bad fstype", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"fstype": "btrfs"}}}}, []string{"fstype"}},
	{"unknown parameter", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"iops": "3000"}}}}, []string{"iops"}},
	{"wrong enum", map[string]any{"volumeSnapshotClass": map[string]any{"deletionPolicy": "Keep"}}, []string{"/volumeSnapshotClass/deletionPolicy", "Retain"}},
	{"secret without token", map[string]any{"secret": map[string]any{"create": true}}, []string{"data"}},
}

// TestCSIBadValuesFail: a value the schema does not allow fails the
// install with the schema's error, as `helm install` fails.
func TestCSIBadValuesFail(t *testing.T) {
	for _, bad := range csiBadValues {
		t.Run(bad.name, func(t *testing.T) { checkRefused(t, csiChartDir, bad) })
	}
}

// TestCSIEnvValuesAreConfigVariables: every variable the chart's env value
// accepts is one the driver reads (digitalocean.CSIConfig,
// docs/digitalocean/csi-config.md), and none is the token, which comes
// from the Secret; and every StorageClass parameter the schema accepts is
// one the driver takes (digitalocean.CSIParameters).
func TestCSIEnvValuesAreConfigVariables(t *testing.T) {
	fields, err := config.Fields(digitalocean.CSIConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range envValueNames(t, csiChartDir) {
		i := slices.IndexFunc(fields, func(f config.Field) bool { return f.Env == name })
		switch {
		case i < 0:
			t.Errorf("env.%s: the CSI driver reads no such variable (docs/digitalocean/csi-config.md)", name)
		case fields[i].SecretKey != "" || fields[i].Type == "secret":
			t.Errorf("env.%s: a credential, which the chart takes from its Secret", name)
		}
	}
	for _, p := range storageClassParameterNames(t) {
		if _, ok := digitalocean.CSIParameters[p]; !ok {
			t.Errorf("storageClasses[].parameters.%s: the driver takes no such parameter", p)
		}
	}
}

// storageClassParameterNames are the StorageClass parameters the chart's
// values.schema.json accepts (storageClasses[].parameters).
func storageClassParameterNames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(csiChartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			StorageClasses struct {
				Items struct {
					Properties struct {
						Parameters struct {
							AdditionalProperties *bool                      `json:"additionalProperties"`
							Properties           map[string]json.RawMessage `json:"properties"`
						} `json:"parameters"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"storageClasses"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	params := schema.Properties.StorageClasses.Items.Properties.Parameters
	if params.AdditionalProperties == nil || *params.AdditionalProperties {
		t.Errorf("storageClasses[].parameters accepts parameters it does not list: want additionalProperties false")
	}
	var names []string
	for name := range params.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		t.Error("the schema lists no StorageClass parameter")
	}
	return names
}

// asSlice is v as a list; nil for anything else.
func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// readFile is the content of path.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
