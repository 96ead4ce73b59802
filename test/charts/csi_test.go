package charts

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	gbcsi "github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	docsi "github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	oscsi "github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	ranchercsi "github.com/ccmkit/ccmkit/providers/rancher/csidriver"
	tritoncsi "github.com/ccmkit/ccmkit/providers/triton/csidriver"
)

// csiChart is one CSI driver's chart, charts/<cloud>-csi-driver. The CSI
// charts are tested apart from the CCM charts (chartDirs): each must
// render, at its defaults in kube-system, exactly the objects of
// examples/manifests/<cloud>/csi, RBAC and CRDs included, and its schema
// must accept exactly the settings the driver reads.
type csiChart struct {
	cloud string
	// driver is the driver name: the CSIDriver's, the StorageClasses'
	// provisioner.
	driver string
	// controllerKind and controller are the controller workload's kind
	// and name; node is the node DaemonSet's name.
	controllerKind, controller, node string
	// plugin is the driver's container, registrar node-driver-registrar's,
	// in the node DaemonSet.
	plugin, registrar string
	// config is the driver's environment (its CSIConfig), parameters the
	// StorageClass parameters it takes (its CSIParameters) and
	// snapshotParameters the VolumeSnapshotClass ones (nil: none).
	config                         any
	parameters, snapshotParameters map[string]string
	// snapshots: the driver has snapshots, so the chart ships the
	// snapshot CRDs, a VolumeSnapshotClass, csi-snapshotter and the
	// snapshot-controller.
	snapshots bool
	// shared: the driver's volumes are shared filesystems
	// (csi.SharedFilesystem), which are neither attached nor grown: the
	// chart has no csi-attacher or csi-resizer (nor their values, RBAC
	// or Leases), and its CSIDriver says attachRequired: false.
	shared bool
	// notEnv are variables the driver reads that the env value must not
	// offer: other names of the credentials, which the chart takes from
	// its Secret (Triton's SDC_*), and what the chart sets from the pod
	// itself (Rancher's NODE_NAME, from the downward API).
	notEnv []string
	// bad are values of this chart's own that its schema must refuse
	// (csiBadValues are every CSI chart's).
	bad []badValue
	// check, when set, checks the cloud's own values against the objects
	// (TestCSIRender).
	check func(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured)
}

// csiCharts are the CSI drivers' charts; TestCSIChartsAreListed fails
// when charts/ holds another.
var csiCharts = []csiChart{
	{
		cloud: "digitalocean", driver: docsi.DriverName,
		controllerKind: "StatefulSet", controller: "csi-do-controller", node: "csi-do-node",
		plugin: "csi-do-plugin", registrar: "csi-node-driver-registrar",
		config: docsi.Config{}, parameters: docsi.Parameters,
		snapshots: true,
		bad: []badValue{
			{"unknown variable", map[string]any{"env": map[string]any{"DO_REGION": "nyc3"}}, []string{"DO_REGION"}},
			{"secret without token", map[string]any{"secret": map[string]any{"create": true}}, []string{"data"}},
		},
	},
	{
		cloud: "openstack", driver: oscsi.DriverName,
		controllerKind: "Deployment", controller: "csi-cinder-controllerplugin", node: "csi-cinder-nodeplugin",
		plugin: "cinder-csi-plugin", registrar: "node-driver-registrar",
		config: oscsi.Config{}, parameters: oscsi.Parameters, snapshotParameters: oscsi.SnapshotParameters,
		snapshots: true,
		bad: []badValue{
			{"credential variable", map[string]any{"env": map[string]any{"OS_PASSWORD": "x"}}, []string{"OS_PASSWORD"}},
			{"secret without cloud.conf", map[string]any{"secret": map[string]any{"create": true}}, []string{"cloudConfig"}},
			{"unknown cloud.conf section", map[string]any{"cloudConfig": map[string]any{"loadBalancer": map[string]any{"subnet-id": "x"}}}, []string{"loadBalancer"}},
			{"backup snapshots", map[string]any{"volumeSnapshotClass": map[string]any{"parameters": map[string]any{"type": "backup"}}}, []string{"/volumeSnapshotClass/parameters/type", "snapshot"}},
			{"unknown snapshot parameter", map[string]any{"volumeSnapshotClass": map[string]any{"parameters": map[string]any{"incremental": "true"}}}, []string{"incremental"}},
			{"bad cluster name", map[string]any{"clusterName": "my cluster"}, []string{"/clusterName"}},
		},
		check: checkOpenStackCSIValues,
	},
	{
		cloud: "brightbox", driver: gbcsi.DriverName,
		controllerKind: "Deployment", controller: "csi-brightbox-controller", node: "csi-brightbox-node",
		plugin: "csi-brightbox-plugin", registrar: "node-driver-registrar",
		config: gbcsi.Config{}, parameters: gbcsi.Parameters,
		bad: []badValue{
			{"credential variable", map[string]any{"env": map[string]any{"BRIGHTBOX_CLIENT": "cli-12345"}}, []string{"BRIGHTBOX_CLIENT"}},
			{"secret without client secret", map[string]any{"secret": map[string]any{"create": true, "data": map[string]any{"clientID": "cli-12345"}}}, []string{"clientSecret"}},
			{"snapshot values", map[string]any{"volumeSnapshotClass": map[string]any{"create": true}}, []string{"volumeSnapshotClass"}},
			{"snapshot-controller", map[string]any{"snapshotController": map[string]any{"enabled": true}}, []string{"snapshotController"}},
			{"bad encrypted", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"encrypted": "yes"}}}}, []string{"encrypted"}},
		},
		check: checkBrightboxCSIValues,
	},
	{
		cloud: "triton", driver: tritoncsi.DriverName,
		controllerKind: "Deployment", controller: "csi-triton-controller", node: "csi-triton-node",
		plugin: "csi-triton-plugin", registrar: "node-driver-registrar",
		config: tritoncsi.Config{}, parameters: tritoncsi.Parameters,
		shared: true,
		notEnv: []string{"SDC_URL", "SDC_ACCOUNT", "SDC_USER", "SDC_KEY_ID"},
		bad: []badValue{
			{"credential variable", map[string]any{"env": map[string]any{"TRITON_KEY_ID": "SHA256:x"}}, []string{"TRITON_KEY_ID"}},
			{"older credential variable", map[string]any{"env": map[string]any{"SDC_ACCOUNT": "x"}}, []string{"SDC_ACCOUNT"}},
			{"secret without key", map[string]any{"secret": map[string]any{"create": true, "data": map[string]any{
				"url": "https://cloudapi.example.com", "account": "a", "keyID": "SHA256:x"}}}, []string{"keyMaterial"}},
			{"attacher values", map[string]any{"sidecars": map[string]any{"attacher": map[string]any{"image": "x"}}}, []string{"attacher"}},
			{"snapshot values", map[string]any{"volumeSnapshotClass": map[string]any{"create": true}}, []string{"volumeSnapshotClass"}},
			{"ext4 volumes", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"fstype": "ext4"}}}}, []string{"fstype"}},
			{"relative mdata-get", map[string]any{"node": map[string]any{"mdataGet": "mdata-get"}}, []string{"/node/mdataGet"}},
		},
		check: checkTritonCSIValues,
	},
	{
		cloud: "rancher", driver: ranchercsi.DriverName,
		controllerKind: "Deployment", controller: "csi-rancher-controller", node: "csi-rancher-node",
		plugin: "csi-rancher-plugin", registrar: "node-driver-registrar",
		config: ranchercsi.Config{}, parameters: ranchercsi.Parameters,
		shared: true,
		notEnv: []string{"NODE_NAME"},
		bad: []badValue{
			{"credential variable", map[string]any{"env": map[string]any{"CATTLE_URL": "http://rancher.example.com"}}, []string{"CATTLE_URL"}},
			{"node name variable", map[string]any{"env": map[string]any{"NODE_NAME": "node-1"}}, []string{"NODE_NAME"}},
			{"relative plugin dir", map[string]any{"env": map[string]any{"RANCHER_VOLUME_PLUGIN_DIR": "run/docker/plugins"}}, []string{"RANCHER_VOLUME_PLUGIN_DIR"}},
			{"secret without secret key", map[string]any{"secret": map[string]any{"create": true, "data": map[string]any{
				"url": "http://rancher.example.com:8080/v2-beta/projects/1a5", "accessKey": "0123456789ABCDEF0123"}}}, []string{"secretKey"}},
			{"attacher values", map[string]any{"sidecars": map[string]any{"attacher": map[string]any{"image": "x"}}}, []string{"attacher"}},
			{"snapshot values", map[string]any{"volumeSnapshotClass": map[string]any{"create": true}}, []string{"volumeSnapshotClass"}},
			{"nfs fstype", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"fstype": "nfs"}}}}, []string{"fstype"}},
			{"bad storage driver", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"driver": "../nfs"}}}}, []string{"driver"}},
			{"driver option without a key", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"driverOpts.": "x"}}}}, []string{"driverOpts."}},
			{"relative volumes dir", map[string]any{"node": map[string]any{"volumesDir": "var/lib/rancher/volumes"}}, []string{"/node/volumesDir"}},
		},
		check: checkRancherCSIValues,
	},
}

// dir is the chart's directory.
func (c csiChart) dir() string { return filepath.Join(chartsDir, c.cloud+"-csi-driver") }

// manifests is the directory of the manifests the chart renders.
func (c csiChart) manifests() string {
	return filepath.Join("../../examples/manifests", c.cloud, "csi")
}

// image is the driver's image without its tag.
func (c csiChart) image() string { return "ghcr.io/ccmkit/" + c.cloud + "-csi-driver" }

// crds is the manifests' CRD file, which the chart ships in crds/.
func (c csiChart) crds() string { return filepath.Join(c.manifests(), "crds.yaml") }

// render renders the chart with values in ns.
func (c csiChart) render(t *testing.T, ns string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChart(c.dir(), renderOptions{Name: c.cloud + "-csi-driver", Namespace: ns, Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// forEachCSIChart runs f for each CSI chart as a subtest named after its
// cloud.
func forEachCSIChart(t *testing.T, f func(t *testing.T, c csiChart)) {
	t.Helper()
	for _, c := range csiCharts {
		t.Run(c.cloud, func(t *testing.T) { f(t, c) })
	}
}

// TestCSIChartsAreListed: csiCharts holds every charts/*-csi-driver, so a
// new CSI chart gets these tests.
func TestCSIChartsAreListed(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(chartsDir, "*-csi-driver"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range csiCharts {
		listed = append(listed, c.dir())
	}
	slices.Sort(dirs)
	slices.Sort(listed)
	if diff := cmp.Diff(listed, dirs); diff != "" {
		t.Errorf("CSI charts (-csiCharts +charts/):\n%s", diff)
	}
}

// TestCSIChartMatchesManifests renders each chart at its default values
// in kube-system and requires every object to be the manifests' (every
// file of examples/manifests/<cloud>/csi but crds.yaml), field for field:
// only the objects' own labels (the chart adds Helm's) and the driver's
// image tag (the manifests say <version>) may differ.
func TestCSIChartMatchesManifests(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		chart := c.objectsByKey(t, c.render(t, "kube-system", nil))
		manifest := c.objectsByKey(t, c.manifestObjects(t))
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
	})
}

// manifestObjects are the objects of the chart's manifests but the CRDs.
func (c csiChart) manifestObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.manifests(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", c.manifests())
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if f == filepath.Clean(c.crds()) {
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

// objectsByKey keys objs by kind, namespace and name, without their
// labels and with the driver's image tag replaced by TAG; a key twice
// fails t.
func (c csiChart) objectsByKey(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]any {
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
			for _, ctr := range cs {
				m := ctr.(map[string]any)
				if img, _ := m["image"].(string); strings.HasPrefix(img, c.image()+":") {
					m["image"] = c.image() + ":TAG"
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
// fail: a sidecar argument changed in the manifests' controller is found.
func TestCSIChartMatchesManifestsFailsOnDrift(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		manifest := c.objectsByKey(t, c.manifestObjects(t))
		chart := c.objectsByKey(t, c.render(t, "kube-system", nil))
		key := c.controllerKind + " kube-system/" + c.controller
		ctrl, ok := manifest[key]
		if !ok {
			t.Fatalf("the manifests have no %s", key)
		}
		cs, _, _ := unstructured.NestedSlice(ctrl, "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["args"] = []any{"--csi-address=/elsewhere"}
		if err := unstructured.SetNestedSlice(ctrl, cs, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		if cmp.Diff(ctrl, chart[key]) == "" {
			t.Error("no difference found with the first sidecar's arguments changed")
		}
	})
}

// TestCSIRBACMatchesManifests: each chart's ServiceAccounts, roles and
// bindings at its defaults in kube-system are those of the manifests'
// rbac.yaml, compared as the CCM charts' are (TestRBACMatchesManifests);
// and that check finds a verb removed or a binding left out.
func TestCSIRBACMatchesManifests(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		chart, err := rbacObjects(c.render(t, "kube-system", nil), "kube-system")
		if err != nil {
			t.Fatal(err)
		}
		shipped, err := readManifests(filepath.Join(c.manifests(), "rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := rbacObjects(shipped, "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := rbacDiff(chart, manifest); diff != "" {
			t.Errorf("the chart's RBAC differs from %s/rbac.yaml (-chart +manifest):\n%s", c.manifests(), diff)
		}
		// Every ServiceAccount the workloads run as is in rbac.yaml.
		for _, o := range c.manifestObjects(t) {
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
	})
}

// snapshotCRDs are the CRDs a chart with snapshots installs.
var snapshotCRDs = []string{
	"volumesnapshotclasses.snapshot.storage.k8s.io",
	"volumesnapshotcontents.snapshot.storage.k8s.io",
	"volumesnapshots.snapshot.storage.k8s.io",
}

// TestCSIChartCRDs: a chart whose driver has snapshots installs (crds/)
// exactly the manifests' snapshot CRDs; one without installs none, and
// its manifests have no crds.yaml.
func TestCSIChartCRDs(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		ch, err := loader.Load(c.dir())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range ch.CRDObjects() {
			got = append(got, string(f.File.Data))
		}
		if !c.snapshots {
			if len(got) > 0 {
				t.Errorf("%d CRDs, want none: the driver has no snapshots", len(got))
			}
			if _, err := os.Stat(c.crds()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: want none (the driver has no snapshots), got %v", c.crds(), err)
			}
			return
		}
		want, err := readFile(c.crds())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{want}, got); diff != "" {
			t.Errorf("the chart's CRDs differ from %s (-manifests +chart):\n%s", c.crds(), diff)
		}
		crds, err := readManifests(c.crds())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, crd := range crds {
			names = append(names, crd.GetName())
		}
		slices.Sort(names)
		if diff := cmp.Diff(snapshotCRDs, names); diff != "" {
			t.Errorf("CRDs (-want +got):\n%s", diff)
		}
	})
}

// TestCSIDryRunApply installs the snapshot CRDs (as helm install does
// before the templates) and applies every object each chart renders, for
// its defaults in kube-system and each set of testdata/values in another
// namespace, with server-side apply, strict field validation and dryRun:
// All.
func TestCSIDryRunApply(t *testing.T) {
	cp, api := controlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNamespace}}
	if _, err := cp.AdminClient().CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, c := range csiCharts {
		if !c.snapshots {
			continue
		}
		crds, err := readManifests(filepath.Join(c.dir(), "crds", "snapshot-crds.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := api.installCRDs(t.Context(), crds); err != nil {
			t.Fatalf("%s: %v", c.cloud, err)
		}
	}
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		for _, set := range valueSets(t, c.dir()) {
			namespace := otherNamespace
			if set.Name == "default" {
				namespace = "kube-system"
			}
			t.Run(set.Name, func(t *testing.T) {
				for _, obj := range c.render(t, namespace, set.Values) {
					if err := api.apply(t.Context(), obj, namespace, true); err != nil {
						t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
					}
				}
			})
		}
	})
}

// readFile is the content of path.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
