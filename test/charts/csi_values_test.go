package charts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestCSIRender renders each chart with each value set and checks the
// objects carry what the values ask for.
func TestCSIRender(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		for _, set := range valueSets(t, c.dir()) {
			t.Run(set.Name, func(t *testing.T) {
				objs := c.render(t, "kube-system", set.Values)
				v := effectiveValues(t, c.dir(), set.Values)
				checkCSIValues(t, c, v, objs)
				if c.check != nil {
					c.check(t, c, v, objs)
				}
			})
		}
	})
}

// valueAt is the value at path in v; nil when there is none.
func valueAt(v map[string]any, path ...string) any {
	val, _, _ := unstructured.NestedFieldNoCopy(v, path...)
	return val
}

// checkCSIValues checks objs against the values every CSI chart has: the
// workloads and the controller's replicas, the driver's arguments and
// environment, the kubelet directory, the credentials Secret (created or
// not, mounted), the StorageClasses, and with snapshots the optional
// snapshot-controller and VolumeSnapshotClass (without, none of the
// snapshot objects), the attacher and resizer as the driver attaches and
// grows volumes or not; and DigitalOcean's udev init container.
func checkCSIValues(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	replicas, ctrlSpec := c.controllerWorkload(t, objs)
	if got, want := fmt.Sprint(replicas), fmt.Sprint(valueAt(v, "controller", "replicas")); got != want {
		t.Errorf("controller replicas %s, want %s", got, want)
	}
	ds := c.nodeDaemonSet(t, objs)
	ctrl := container(t, ctrlSpec, c.plugin)
	node := container(t, ds.Spec.Template.Spec, c.plugin)
	for _, d := range []struct {
		name string
		c    corev1.Container
		mode string
	}{{"controller", ctrl, "--mode=controller"}, {"node", node, "--mode=node"}} {
		if !slices.Contains(d.c.Args, d.mode) {
			t.Errorf("%s driver args %q lack %s", d.name, d.c.Args, d.mode)
		}
		var extra []string
		for _, a := range asSlice(valueAt(v, d.name, "extraArgs")) {
			extra = append(extra, fmt.Sprint(a))
		}
		if n := len(d.c.Args); n < len(extra) || !slices.Equal(d.c.Args[n-len(extra):], extra) {
			t.Errorf("%s driver args %q do not end with extraArgs %q", d.name, d.c.Args, extra)
		}
		env, _ := v["env"].(map[string]any)
		for name, val := range env {
			want := fmt.Sprint(val)
			has := slices.ContainsFunc(d.c.Env, func(e corev1.EnvVar) bool { return e.Name == name && e.Value == want })
			if val != nil && want != "" && !has {
				t.Errorf("%s driver env lacks %s=%s: %v", d.name, name, want, d.c.Env)
			}
			if (val == nil || want == "") && slices.ContainsFunc(d.c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
				t.Errorf("%s driver env sets %s, empty in env", d.name, name)
			}
		}
		for _, e := range asSlice(v["extraEnv"]) {
			m, _ := e.(map[string]any)
			if !slices.ContainsFunc(d.c.Env, func(ev corev1.EnvVar) bool { return ev.Name == m["name"] && ev.Value == m["value"] }) {
				t.Errorf("%s driver env lacks extraEnv %v: %v", d.name, m, d.c.Env)
			}
		}
	}
	kubelet := strings.TrimSuffix(fmt.Sprint(valueAt(v, "node", "kubeletDir")), "/")
	wantReg := "--kubelet-registration-path=" + kubelet + "/plugins/" + c.driver + "/csi.sock"
	if reg := container(t, ds.Spec.Template.Spec, c.registrar); !slices.Contains(reg.Args, wantReg) {
		t.Errorf("registrar args %q lack %s", reg.Args, wantReg)
	}
	if !slices.ContainsFunc(node.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.MountPath == kubelet && m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationBidirectional
	}) {
		t.Errorf("the node plugin does not mount %s with Bidirectional propagation: %v", kubelet, node.VolumeMounts)
	}
	if got, want := len(ds.Spec.Template.Spec.InitContainers) == 1, valueAt(v, "node", "removeAutomountUdevRule") == true; got != want {
		t.Errorf("udev init container rendered: %v, node.removeAutomountUdevRule: %v", got, want)
	}
	secretName := fmt.Sprint(valueAt(v, "secret", "name"))
	if got := find(objs, "Secret", secretName) != nil; got != (valueAt(v, "secret", "create") == true) {
		t.Errorf("Secret %s rendered: %v, secret.create: %v", secretName, got, valueAt(v, "secret", "create"))
	}
	if !slices.ContainsFunc(ctrlSpec.Volumes, func(vol corev1.Volume) bool {
		return vol.Secret != nil && vol.Secret.SecretName == secretName
	}) {
		t.Errorf("the controller does not mount the Secret %s: %v", secretName, ctrlSpec.Volumes)
	}
	checkSecret(t, v, objs)
	checkStorageClasses(t, c, v, objs)
	checkSnapshotObjects(t, c, v, objs, ctrlSpec)
	checkAttachObjects(t, c, objs, ctrlSpec)
}

// checkAttachObjects: a shared filesystem's chart (csiChart.shared) runs
// no csi-attacher or csi-resizer and says attachRequired: false; any
// other runs both and says attachRequired: true.
func checkAttachObjects(t *testing.T, c csiChart, objs []*unstructured.Unstructured, ctrl corev1.PodSpec) {
	t.Helper()
	for _, name := range []string{"csi-attacher", "csi-resizer"} {
		if has := slices.ContainsFunc(ctrl.Containers, func(ctr corev1.Container) bool { return ctr.Name == name }); has == c.shared {
			t.Errorf("%s in the controller: %v, for a driver whose volumes are shared filesystems: %v", name, has, c.shared)
		}
	}
	d := find(objs, "CSIDriver", c.driver)
	if d == nil {
		t.Fatalf("no CSIDriver %s", c.driver)
	}
	if attach, _, _ := unstructured.NestedBool(d.Object, "spec", "attachRequired"); attach == c.shared {
		t.Errorf("CSIDriver %s: attachRequired %v, for a driver whose volumes are shared filesystems: %v", c.driver, attach, c.shared)
	}
}

// checkSnapshotObjects: with snapshots, the snapshot-controller as
// snapshotController.enabled says and the VolumeSnapshotClass as
// volumeSnapshotClass says, with its parameters; without, no snapshot
// object and no csi-snapshotter.
func checkSnapshotObjects(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured, ctrl corev1.PodSpec) {
	t.Helper()
	snapshotter := slices.ContainsFunc(ctrl.Containers, func(ctr corev1.Container) bool { return ctr.Name == "csi-snapshotter" })
	if !c.snapshots {
		for _, kind := range []string{"VolumeSnapshotClass", "CustomResourceDefinition"} {
			if o := find(objs, kind, ""); o != nil {
				t.Errorf("%s %s rendered: the driver has no snapshots", kind, o.GetName())
			}
		}
		if find(objs, "Deployment", "snapshot-controller") != nil || snapshotter {
			t.Error("the snapshot-controller or csi-snapshotter rendered: the driver has no snapshots")
		}
		return
	}
	if !snapshotter {
		t.Error("no csi-snapshotter in the controller")
	}
	if got, want := find(objs, "Deployment", "snapshot-controller") != nil, valueAt(v, "snapshotController", "enabled") == true; got != want {
		t.Errorf("snapshot-controller rendered: %v, snapshotController.enabled: %v", got, want)
	}
	name := fmt.Sprint(valueAt(v, "volumeSnapshotClass", "name"))
	vsc := find(objs, "VolumeSnapshotClass", name)
	if got, want := vsc != nil, valueAt(v, "volumeSnapshotClass", "create") == true; got != want {
		t.Fatalf("VolumeSnapshotClass %s rendered: %v, volumeSnapshotClass.create: %v", name, got, want)
	}
	if vsc == nil {
		return
	}
	if d, _, _ := unstructured.NestedString(vsc.Object, "driver"); d != c.driver {
		t.Errorf("VolumeSnapshotClass %s: driver %q", name, d)
	}
	if p, _, _ := unstructured.NestedString(vsc.Object, "deletionPolicy"); p != fmt.Sprint(valueAt(v, "volumeSnapshotClass", "deletionPolicy")) {
		t.Errorf("VolumeSnapshotClass %s: deletionPolicy %q", name, p)
	}
	params, _, _ := unstructured.NestedStringMap(vsc.Object, "parameters")
	want := stringMap(valueAt(v, "volumeSnapshotClass", "parameters"))
	if diff := cmp.Diff(want, params, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("VolumeSnapshotClass %s parameters (-values +object):\n%s", name, diff)
	}
}

// checkStorageClasses: one StorageClass per storageClasses entry, with the
// driver as provisioner, its parameters and default-class annotation.
func checkStorageClasses(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	var names []string
	for _, entry := range asSlice(v["storageClasses"]) {
		m := entry.(map[string]any)
		name := fmt.Sprint(m["name"])
		names = append(names, name)
		sc := find(objs, "StorageClass", name)
		if sc == nil {
			t.Errorf("StorageClass %s not rendered", name)
			continue
		}
		if p, _, _ := unstructured.NestedString(sc.Object, "provisioner"); p != c.driver {
			t.Errorf("StorageClass %s: provisioner %q", name, p)
		}
		params, _, _ := unstructured.NestedStringMap(sc.Object, "parameters")
		if diff := cmp.Diff(stringMap(m["parameters"]), params, cmpopts.EquateEmpty()); diff != "" {
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

// stringMap is a map value with its values as strings, as a StorageClass
// or VolumeSnapshotClass holds them.
func stringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, val := range m {
		out[k] = fmt.Sprint(val)
	}
	return out
}

// controllerWorkload is the controller's replicas and pod spec, of a
// StatefulSet or a Deployment.
func (c csiChart) controllerWorkload(t *testing.T, objs []*unstructured.Unstructured) (int32, corev1.PodSpec) {
	t.Helper()
	u := find(objs, c.controllerKind, c.controller)
	switch c.controllerKind {
	case "StatefulSet":
		var s appsv1.StatefulSet
		fromUnstructured(t, u, &s)
		return *s.Spec.Replicas, s.Spec.Template.Spec
	case "Deployment":
		var d appsv1.Deployment
		fromUnstructured(t, u, &d)
		return *d.Spec.Replicas, d.Spec.Template.Spec
	}
	t.Fatalf("controller kind %s", c.controllerKind)
	return 0, corev1.PodSpec{}
}

func (c csiChart) nodeDaemonSet(t *testing.T, objs []*unstructured.Unstructured) appsv1.DaemonSet {
	t.Helper()
	var d appsv1.DaemonSet
	fromUnstructured(t, find(objs, "DaemonSet", c.node), &d)
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

// asSlice is v as a list; nil for anything else.
func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// csiBadValues are values every CSI chart's schema must refuse (each
// chart's own are in csiCharts).
var csiBadValues = []badValue{
	{"misspelt key", map[string]any{"controler": map[string]any{"replicas": 1}}, []string{"controler"}},
	{"misspelt nested key", map[string]any{"controller": map[string]any{"replica": 1}}, []string{"replica"}},
	{"wrong type", map[string]any{"controller": map[string]any{"replicas": "two"}}, []string{"/controller/replicas", "integer"}},
	{"relative kubelet dir", map[string]any{"node": map[string]any{"kubeletDir": "var/lib/kubelet"}}, []string{"/node/kubeletDir"}},
	{"bad fstype", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"fstype": "btrfs"}}}}, []string{"fstype"}},
	{"unknown parameter", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"iops": "3000"}}}}, []string{"iops"}},
	{"sidecar-set parameter", map[string]any{"storageClasses": []any{map[string]any{"name": "x", "parameters": map[string]any{"csi.storage.k8s.io/pvc/name": "x"}}}}, []string{"csi.storage.k8s.io/pvc/name"}},
}

// csiSnapshotBadValues are values every chart with snapshots must refuse.
var csiSnapshotBadValues = []badValue{
	{"wrong enum", map[string]any{"volumeSnapshotClass": map[string]any{"deletionPolicy": "Keep"}}, []string{"/volumeSnapshotClass/deletionPolicy", "Retain"}},
	{"misspelt snapshot-controller key", map[string]any{"snapshotController": map[string]any{"enable": false}}, []string{"enable"}},
}

// TestCSIBadValuesFail: a value the schema does not allow fails the
// install with the schema's error, as `helm install` fails.
func TestCSIBadValuesFail(t *testing.T) {
	forEachCSIChart(t, func(t *testing.T, c csiChart) {
		bad := slices.Concat(csiBadValues, c.bad)
		if c.snapshots {
			bad = append(bad, csiSnapshotBadValues...)
		}
		for _, b := range bad {
			t.Run(b.name, func(t *testing.T) { checkRefused(t, c.dir(), b) })
		}
	})
}
