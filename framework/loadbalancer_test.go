package framework_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

const idAnnotation = frameworktest.FakeAnnotationPrefix + "load-balancer-id"

type lbFixture struct {
	ctx      context.Context
	cloud    *frameworktest.FakeCloud
	lb       cloudprovider.LoadBalancer
	kube     *fake.Clientset
	recorder *record.FakeRecorder
	nodes    []*corev1.Node
}

func newLBFixture(t *testing.T) *lbFixture {
	t.Helper()
	return newLBFixtureEnv(t, &framework.Env{}, 0)
}

// newLBFixtureEnv is newLBFixture with env's settings, over a fake cloud
// whose new LBs settle at their reads-th read (0: on Advance only).
func newLBFixtureEnv(t *testing.T, env *framework.Env, reads int) *lbFixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &lbFixture{ctx: ctx, cloud: frameworktest.NewFakeCloud(), kube: fake.NewClientset(), recorder: record.NewFakeRecorder(100)}
	f.cloud.ProvisioningReads = reads
	env.Client, env.Recorder = f.kube, f.recorder
	cloud, err := framework.NewCloud(ctx, frameworktest.NewFakeProvider(f.cloud), env)
	if err != nil {
		t.Fatal(err)
	}
	f.lb, _ = cloud.LoadBalancer()
	for _, name := range []string{"a", "b"} {
		f.nodes = append(f.nodes, node(name, "fake://"+f.cloud.AddInstance(name)))
	}
	return f
}

func (f *lbFixture) service(t *testing.T, ann map[string]string) *corev1.Service {
	t.Helper()
	return f.serviceWithUID(t, "uid-web", ann)
}

func (f *lbFixture) serviceWithUID(t *testing.T, uid types.UID, ann map[string]string) *corev1.Service {
	t.Helper()
	return f.serviceNamed(t, "web", uid, ann)
}

func (f *lbFixture) serviceNamed(t *testing.T, name string, uid types.UID, ann map[string]string) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid, Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
	}
	svc, err := f.kube.CoreV1().Services("default").Create(f.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func (f *lbFixture) get(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := f.kube.CoreV1().Services(svc.Namespace).Get(f.ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (f *lbFixture) events() string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

func TestEnsureRetriesWhileProvisioningThenReportsStatus(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, nil)

	_, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	var retry *api.RetryError
	if !errors.As(err, &retry) {
		t.Fatalf("first Ensure on a provisioning LB = %v; want a RetryError", err)
	}
	lbs := f.cloud.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("cloud holds %d LBs, want 1", len(lbs))
	}
	// The ID is recorded at once, so a crash now cannot orphan the LB.
	svc = f.get(t, svc)
	if got := svc.Annotations[idAnnotation]; got != lbs[0].ID {
		t.Fatalf("ID annotation = %q, want %q", got, lbs[0].ID)
	}
	if ev := f.events(); !strings.Contains(ev, "Normal CreatedLoadBalancer") {
		t.Errorf("events = %q; want CreatedLoadBalancer", ev)
	}

	f.cloud.Advance()
	status, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.4"}}}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if n := len(f.cloud.LoadBalancers()); n != 1 {
		t.Errorf("cloud holds %d LBs after the retry, want 1", n)
	}
}

func TestInvalidAnnotationsWarnAndWriteNothing(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{
		frameworktest.FakeAnnotationPrefix + "health-check-interval": "abc",
		frameworktest.FakeAnnotationPrefix + "proxy-protocol":        "maybe",
	})
	before := f.cloud.Writes()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("Ensure with invalid annotations succeeded")
	}
	if w := f.cloud.Writes() - before; w != 0 {
		t.Errorf("invalid annotations caused %d cloud writes, want 0", w)
	}
	// One lookup of a load balancer the Service may own without its ID
	// recorded (TestRefusedServiceRecordsItsLoadBalancer); no call on
	// the retries.
	if calls := f.cloud.Calls(); len(calls) != 1 || calls["lb.list"] != 1 {
		t.Errorf("invalid annotations caused cloud calls %v, want the one list", calls)
	}
	for range 3 {
		if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
			t.Fatal("Ensure with invalid annotations succeeded")
		}
	}
	if calls := f.cloud.Calls(); len(calls) != 1 || calls["lb.list"] != 1 {
		t.Errorf("retries of invalid annotations caused cloud calls %v, want none after the first list", calls)
	}
	ev := f.events()
	for _, key := range []string{"health-check-interval", "proxy-protocol"} {
		if !strings.Contains(ev, "Warning InvalidAnnotation") || !strings.Contains(ev, key) {
			t.Errorf("events = %q; want one Warning naming %s", ev, key)
		}
	}
}

func TestUnknownAnnotationWarnsButProceeds(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{frameworktest.FakeAnnotationPrefix + "helth-check-interval": "5"})
	_, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	var retry *api.RetryError
	if !errors.As(err, &retry) {
		t.Fatalf("Ensure = %v, want a RetryError (LB created, provisioning)", err)
	}
	if ev := f.events(); !strings.Contains(ev, "Warning UnknownAnnotation") || !strings.Contains(ev, "helth-check-interval") {
		t.Errorf("events = %q; want UnknownAnnotation naming the typo", ev)
	}
}

func TestProxyProtocolSetsIPModeProxy(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{frameworktest.FakeAnnotationPrefix + "proxy-protocol": "true"})
	_, _ = f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	f.cloud.Advance()
	status, err := f.lb.EnsureLoadBalancer(f.ctx, "c", f.get(t, svc), f.nodes)
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Ingress) != 1 || status.Ingress[0].IPMode == nil || *status.Ingress[0].IPMode != corev1.LoadBalancerIPModeProxy {
		t.Fatalf("status = %+v; want ipMode Proxy", status)
	}
}

func TestHostnameReplacesTheAddresses(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{frameworktest.FakeAnnotationPrefix + "hostname": "lb.example.com"})
	_, _ = f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	f.cloud.Advance()
	status, err := f.lb.EnsureLoadBalancer(f.ctx, "c", f.get(t, svc), f.nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}}}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("Ensure status (-want +got):\n%s", diff)
	}
	got, exists, err := f.lb.GetLoadBalancer(f.ctx, "c", f.get(t, svc))
	if err != nil || !exists {
		t.Fatalf("GetLoadBalancer = %v, %v", exists, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetLoadBalancer status (-want +got):\n%s", diff)
	}
}

func TestAdoptsLoadBalancerByIDAnnotation(t *testing.T) {
	f := newLBFixture(t)
	// An LB made for this Service by an earlier CCM, known only by ID.
	first := f.service(t, nil)
	_, _ = f.lb.EnsureLoadBalancer(f.ctx, "c", first, f.nodes)
	f.cloud.Advance()
	id := f.cloud.LoadBalancers()[0].ID
	if err := f.kube.CoreV1().Services("default").Delete(f.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same Service made again: a new UID, the LB's ID in its annotation.
	adopted := f.serviceWithUID(t, "another-uid", map[string]string{idAnnotation: id})
	f.events()

	before := f.cloud.Writes()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", adopted, f.nodes); err != nil {
		t.Fatal(err)
	}
	if lbs := f.cloud.LoadBalancers(); len(lbs) != 1 || lbs[0].ID != id {
		t.Fatalf("cloud LBs = %+v; want the adopted %s only", lbs, id)
	}
	// One write: the LB now records its new owner.
	if w := f.cloud.Writes() - before; w != 1 {
		t.Errorf("adopting an up-to-date LB made %d writes, want 1", w)
	}
	if ev := f.events(); !strings.Contains(ev, "Normal AdoptedLoadBalancer Adopting load balancer "+id) {
		t.Errorf("events = %q; want an AdoptedLoadBalancer Event", ev)
	}
	before = f.cloud.Writes()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", f.get(t, adopted), f.nodes); err != nil {
		t.Fatal(err)
	}
	if w := f.cloud.Writes() - before; w != 0 {
		t.Errorf("Ensure after the adoption made %d writes, want 0", w)
	}
}

func TestDeleteIsIdempotentAndFollowsStaleID(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{idAnnotation: "lb-gone"})
	for i := range 2 {
		if err := f.lb.EnsureLoadBalancerDeleted(f.ctx, "c", svc); err != nil {
			t.Fatalf("delete %d of a missing LB: %v", i, err)
		}
	}
	if ev := f.events(); ev != "" {
		t.Errorf("deleting nothing emitted events %q", ev)
	}
}

func TestUpdateNeverCreates(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, nil)
	if err := f.lb.UpdateLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("UpdateLoadBalancer without an LB succeeded; want an error")
	}
	if lbs, w := f.cloud.LoadBalancers(), f.cloud.Writes(); len(lbs) != 0 || w != 0 {
		t.Fatalf("UpdateLoadBalancer without an LB left %d LBs after %d writes; want none", len(lbs), w)
	}
}

// The service controller's node sync calls UpdateLoadBalancer while the
// Service's own worker may be in EnsureLoadBalancer: one LB must result.
func TestConcurrentEnsureAndUpdateMakeOneLoadBalancer(t *testing.T) {
	f := newLBFixture(t)
	for i := range 20 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
				Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
		}
		if _, err := f.kube.CoreV1().Services("default").Create(f.ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes) })
		wg.Go(func() { _ = f.lb.UpdateLoadBalancer(f.ctx, "c", svc, f.nodes) })
		wg.Go(func() { _, _ = f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes) })
		wg.Wait()
	}
	if n := len(f.cloud.LoadBalancers()); n != 20 {
		t.Fatalf("20 Services synced concurrently made %d LBs, want 20", n)
	}
}
