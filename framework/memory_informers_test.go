package framework_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

var (
	heavyNode = &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			Images:    []corev1.ContainerImage{{Names: []string{"app:v1"}}},
		},
	}
	heavyService = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
)

// NewCloud trims the cached Nodes and, for a provider with load balancers,
// the cached Services.
func TestNewCloudTrimsCachedObjects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := frameworktest.NewClientset(heavyNode.DeepCopy(), heavyService.DeepCopy())
	factory := informers.NewSharedInformerFactory(client, 0)
	if _, err := framework.NewCloud(ctx, frameworktest.NewFakeProvider(frameworktest.NewFakeCloud()), &framework.Env{Client: client, Informers: factory}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v informer did not sync", typ)
		}
	}

	node, err := factory.Core().V1().Nodes().Lister().Get("n1")
	if err != nil {
		t.Fatal(err)
	}
	if node.ManagedFields != nil || node.Status.Images != nil {
		t.Errorf("cached node keeps managedFields %v, images %v", node.ManagedFields, node.Status.Images)
	}
	if !reflect.DeepEqual(node.Labels, heavyNode.Labels) || !reflect.DeepEqual(node.Status.Addresses, heavyNode.Status.Addresses) {
		t.Errorf("cached node lost fields it should keep: %+v", node)
	}
	svc, err := factory.Core().V1().Services().Lister().Services("default").Get("s")
	if err != nil {
		t.Fatal(err)
	}
	if svc.ManagedFields != nil {
		t.Errorf("cached service keeps managedFields %v", svc.ManagedFields)
	}
}

// noLBProvider has no load balancers: no service controller runs.
type noLBProvider struct{}

func (noLBProvider) Name() string                               { return "nolb" }
func (noLBProvider) Init(context.Context, *framework.Env) error { return nil }

// Without load balancers NewCloud creates no Service informer (it would
// list and watch every Service for nothing).
func TestNewCloudWithoutLoadBalancersWatchesNoServices(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := frameworktest.NewClientset(heavyNode.DeepCopy())
	factory := informers.NewSharedInformerFactory(client, 0)
	if _, err := framework.NewCloud(ctx, noLBProvider{}, &framework.Env{Client: client, Informers: factory}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	if _, ok := synced[reflect.TypeOf(&corev1.Service{})]; ok {
		t.Error("NewCloud created a Service informer for a provider without load balancers")
	}
	if _, ok := synced[reflect.TypeOf(&corev1.Node{})]; !ok {
		t.Error("NewCloud did not set up the Node informer")
	}
	node, err := factory.Core().V1().Nodes().Lister().Get("n1")
	if err != nil {
		t.Fatal(err)
	}
	if node.ManagedFields != nil || node.Status.Images != nil {
		t.Errorf("cached node keeps managedFields %v, images %v", node.ManagedFields, node.Status.Images)
	}
}

// A factory already started (and so informers already running) is left
// alone: NewCloud does not fail.
func TestNewCloudWithStartedInformers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := frameworktest.NewClientset(heavyNode.DeepCopy())
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.Core().V1().Nodes().Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if _, err := framework.NewCloud(ctx, noLBProvider{}, &framework.Env{Client: client, Informers: factory}); err != nil {
		t.Fatal(err)
	}
}
