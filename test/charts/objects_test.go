package charts

import (
	"encoding/base64"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// find returns the first object of kind called name ("": any name), or
// nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	return nil
}

// only returns the one object of any of kinds; none or several fail t.
func only(t *testing.T, objs []*unstructured.Unstructured, kinds ...string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d objects of kinds %v, want one", len(found), kinds)
	}
	return found[0]
}

// podSpec is the pod template's spec of a Deployment or DaemonSet.
func podSpec(t *testing.T, workload *unstructured.Unstructured) corev1.PodSpec {
	t.Helper()
	conv := runtime.DefaultUnstructuredConverter
	switch workload.GetKind() {
	case "Deployment":
		var d appsv1.Deployment
		if err := conv.FromUnstructuredWithValidation(workload.Object, &d, true); err != nil {
			t.Fatalf("Deployment %s: %v", workload.GetName(), err)
		}
		return d.Spec.Template.Spec
	case "DaemonSet":
		var d appsv1.DaemonSet
		if err := conv.FromUnstructuredWithValidation(workload.Object, &d, true); err != nil {
			t.Fatalf("DaemonSet %s: %v", workload.GetName(), err)
		}
		return d.Spec.Template.Spec
	}
	t.Fatalf("%s %s is not a workload", workload.GetKind(), workload.GetName())
	return corev1.PodSpec{}
}

// ccmContainer is the workload's only container, the CCM.
func ccmContainer(t *testing.T, workload *unstructured.Unstructured) corev1.Container {
	t.Helper()
	spec := podSpec(t, workload)
	if len(spec.Containers) != 1 {
		t.Fatalf("%s %s has %d containers, want the CCM's only", workload.GetKind(), workload.GetName(), len(spec.Containers))
	}
	return spec.Containers[0]
}

func decodeBase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("Secret data: %v", err)
	}
	return string(b)
}
