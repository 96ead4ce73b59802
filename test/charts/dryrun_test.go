package charts

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// otherNamespace is where the non-default value sets are installed, to
// show the charts work outside kube-system.
const otherNamespace = "cloud-system"

// TestDryRunApply applies every object each chart renders, for each value
// set, to a real kube-apiserver with server-side apply, strict field
// validation and dryRun: All, so the API server decodes, defaults,
// validates and admits it (the ServiceMonitor against its CRD) without
// storing it.
func TestDryRunApply(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	cp, api := controlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNamespace}}
	if _, err := cp.AdminClient().CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for _, set := range valueSets(t, dir) {
			namespace := otherNamespace
			if set.Name == "default" {
				namespace = "kube-system"
			}
			t.Run(cloudOf(dir)+"/"+set.Name, func(t *testing.T) {
				objs, err := renderChart(dir, renderOptions{Name: filepath.Base(dir), Namespace: namespace, Values: set.Values})
				if err != nil {
					t.Fatal(err)
				}
				for _, obj := range objs {
					if err := api.apply(t.Context(), obj, namespace, true); err != nil {
						t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
					}
				}
			})
		}
	}
}

// TestDryRunApplyRejectsBadObjects shows the dry run above can fail: a
// rendered Deployment with a misspelt field, and a ServiceMonitor with a
// wrong scheme, are refused.
func TestDryRunApplyRejectsBadObjects(t *testing.T) {
	dirs, err := chartDirs()
	if err != nil {
		t.Fatal(err)
	}
	_, api := controlPlane(t)
	values, err := readValues(filepath.Join("testdata/values", filepath.Base(dirs[0]), "daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := renderChart(dirs[0], renderOptions{Name: filepath.Base(dirs[0]), Namespace: "kube-system", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	workload := only(t, objs, "Deployment", "DaemonSet").DeepCopy()
	if err := unstructured.SetNestedField(workload.Object, int64(2), "spec", "replica"); err != nil {
		t.Fatal(err)
	}
	monitor := find(objs, "ServiceMonitor", "")
	if monitor == nil {
		t.Fatalf("%s daemonset.yaml: no ServiceMonitor", dirs[0])
	}
	monitor = monitor.DeepCopy()
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	endpoints[0].(map[string]any)["scheme"] = "HTTPZ"
	if err := unstructured.SetNestedSlice(monitor.Object, endpoints, "spec", "endpoints"); err != nil {
		t.Fatal(err)
	}
	for obj, want := range map[*unstructured.Unstructured]string{workload: "spec.replica", monitor: "HTTPZ"} {
		err := api.apply(t.Context(), obj, "kube-system", true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: got %v, want an error naming %s", obj.GetKind(), obj.GetName(), err, want)
		}
	}
}
