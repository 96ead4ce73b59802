package framework

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimCachedObjectNode(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:          "n1",
			Labels:        map[string]string{"a": "b"},
			Annotations:   map[string]string{"c": "d"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)}},
		},
		Spec: corev1.NodeSpec{ProviderID: "fake://1", Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Capacity:        corev1.ResourceList{},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.37.1"},
			Images:          []corev1.ContainerImage{{Names: []string{"registry.example.com/app@sha256:00", "registry.example.com/app:v1"}, SizeBytes: 1}},
			VolumesInUse:    []corev1.UniqueVolumeName{"kubernetes.io/csi/x^vol-1"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "kubernetes.io/csi/x^vol-1", DevicePath: "/dev/sdb"}},
		},
	}
	want := node.DeepCopy()
	want.ManagedFields, want.Status.Images, want.Status.VolumesInUse, want.Status.VolumesAttached = nil, nil, nil, nil

	for i := range 2 { // idempotent
		out, err := trimCachedObject(node)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := out.(*corev1.Node)
		if !ok || got != node {
			t.Fatalf("pass %d: got %T %p, want the same *Node %p", i, out, out, node)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d: trimmed node\n%+v\nwant\n%+v", i, got, want)
		}
	}
}

func TestTrimCachedObjectService(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "s", Namespace: "default",
			Annotations:   map[string]string{"lb": "x"},
			Finalizers:    []string{"service.kubernetes.io/load-balancer-cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
	want := svc.DeepCopy()
	want.ManagedFields = nil
	out, err := trimCachedObject(svc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, any(want)) {
		t.Fatalf("trimmed service %+v, want %+v", out, want)
	}
}

// Objects that are not API objects (a deletion the informer missed) pass
// through untouched.
func TestTrimCachedObjectOther(t *testing.T) {
	tomb := cache.DeletedFinalStateUnknown{Key: "default/s", Obj: &corev1.Service{}}
	out, err := trimCachedObject(tomb)
	if err != nil || out != any(tomb) {
		t.Fatalf("got %v, %v; want the tombstone unchanged", out, err)
	}
}

func TestApplyMemoryDefaults(t *testing.T) {
	for _, tc := range []struct {
		gogc string
		want int // -1: not set
	}{
		{"", DefaultGOGC},
		{"100", -1},
		{"off", -1},
		{"50", -1},
	} {
		got := -1
		applyMemoryDefaults(func(k string) string {
			if k == "GOGC" {
				return tc.gogc
			}
			return ""
		}, func(p int) int { got = p; return 100 })
		if got != tc.want {
			t.Errorf("GOGC=%q: SetGCPercent(%d), want %d", tc.gogc, got, tc.want)
		}
	}
}
