package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
)

var managed = label{key: "custom-ccm.example.com/managed", value: "true"}

func testNode(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func TestLabelerSync(t *testing.T) {
	tests := []struct {
		name        string
		node        *corev1.Node // nil: the Node is gone
		wantLabels  map[string]string
		wantPatches int
	}{
		{
			name:        "unlabeled node gets the label, other labels kept",
			node:        testNode("n", map[string]string{"zone": "a"}),
			wantLabels:  map[string]string{"zone": "a", managed.key: "true"},
			wantPatches: 1,
		},
		{
			name:        "wrong value is corrected",
			node:        testNode("n", map[string]string{managed.key: "false"}),
			wantLabels:  map[string]string{managed.key: "true"},
			wantPatches: 1,
		},
		{
			name:       "labeled node costs no write",
			node:       testNode("n", map[string]string{managed.key: "true"}),
			wantLabels: map[string]string{managed.key: "true"},
		},
		{
			name: "deleted node is skipped",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			client := fake.NewClientset()
			if tt.node != nil {
				client = fake.NewClientset(tt.node)
			}
			c := startedLabeler(t, ctx, client)

			if err := c.sync(ctx, "n"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if got := countVerb(client, "patch"); got != tt.wantPatches {
				t.Errorf("%d patches, want %d", got, tt.wantPatches)
			}
			if tt.node == nil {
				return
			}
			got, err := client.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// startedLabeler returns a labeler whose informer has synced.
func startedLabeler(t *testing.T, ctx context.Context, client *fake.Clientset) *labeler {
	t.Helper()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newLabeler(client, factory, managed, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		t.Fatal("informer did not sync")
	}
	return c
}

func countVerb(client *fake.Clientset, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

// TestLabelerController runs the controller as the CCM does and expects
// every Node, including one that joins later, to end up labeled, and the
// controller to stop when its context ends.
func TestLabelerController(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(testNode("existing", nil))
	factory := informers.NewSharedInformerFactory(client, 0)
	defer factory.Shutdown()

	done := make(chan error, 1)
	go func() { done <- runLabeler(ctx, &framework.Env{Client: client, Informers: factory}, managed) }()
	if _, err := client.CoreV1().Nodes().Create(ctx, testNode("joined", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	allLabeled := func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			if n.Labels[managed.key] != managed.value {
				return false, nil
			}
		}
		return len(nodes.Items) == 2, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, allLabeled); err != nil {
		t.Fatalf("waiting for every Node to be labeled: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runLabeler returned %v after cancel, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runLabeler did not return after its context ended")
	}
}

func TestLabelFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    label
		wantErr bool
	}{
		{in: "custom-ccm.example.com/managed=true", want: managed},
		{in: "team=", want: label{key: "team"}},
		{in: "no-equals", wantErr: true},
		{in: "bad key=x", wantErr: true},
		{in: "k=bad value", wantErr: true},
	}
	for _, tt := range tests {
		var got label
		err := got.Set(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Set(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
		}
		if err == nil && got != tt.want {
			t.Errorf("Set(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
