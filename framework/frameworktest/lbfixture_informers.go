package frameworktest

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
)

// CreateNode creates n in the fixture's clientset with the UID and
// resourceVersion an API server would give it (the fake clientset gives
// none): the pipeline compares the request's Nodes with its Node
// informer's by both (framework/lbnodes.go). Requests pass the same
// objects, as the service controller passes the informer's.
func (f *LBFixture) CreateNode(t *testing.T, n *corev1.Node) {
	t.Helper()
	n.UID, n.ResourceVersion = types.UID("uid-"+n.Name), "1"
	if _, err := f.Kube.CoreV1().Nodes().Create(f.Ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// StartWithNodeInformer creates the fixture's Nodes in its clientset
// (CreateNode) and starts a new CCM, as Start does, with an informer
// factory: the service controller lists Nodes from its Node informer, and
// the pipeline reads it. handler, when not nil, sees the informer's
// events. It returns once the informer has synced and asked for its
// watch, so that a Node created next reaches handler.
func (f *LBFixture) StartWithNodeInformer(t *testing.T, handler cache.ResourceEventHandler) cloudprovider.LoadBalancer {
	t.Helper()
	for _, n := range f.Nodes {
		f.CreateNode(t, n)
	}
	watching := make(chan struct{})
	var once sync.Once
	// Only notes the watch: the clientset answers it (with copies, see
	// NewClientset).
	f.Kube.PrependWatchReactor("nodes", func(k8stesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.Kube, 0)
	lb := f.Start(t, func(env *framework.Env) { env.Informers = factory })
	if handler != nil {
		if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("the %v informer did not sync", typ)
		}
	}
	select {
	case <-watching:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for the Node informer's watch")
	}
	return lb
}
