package frameworktest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// A watch that starts after its list gets the objects stored in between
// as copies: changing them leaves the clientset's own untouched.
func TestNewClientsetWatchesDeliverCopies(t *testing.T) {
	ctx := t.Context()
	c := frameworktest.NewClientset()
	nodes := c.CoreV1().Nodes()
	list, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}}}
	if _, err := nodes.Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := nodes.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := <-w.ResultChan()
	got, ok := e.Object.(*corev1.Node)
	if !ok || got.Name != "n" {
		t.Fatalf("first event %s %T, want the Node n", e.Type, e.Object)
	}
	got.Labels = nil

	stored, err := nodes.Get(ctx, "n", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Labels["a"] != "b" {
		t.Errorf("changing a watched object changed the clientset's: labels %v", stored.Labels)
	}
}
