package framework_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestWarningsOncePerProblem: client-go lets about 25 Events per object
// through before it throttles. A Warning repeated on each of 40 retries
// would use them up and hide the next, different mistake; once per
// problem, the second problem reaches the API.
func TestWarningsOncePerProblem(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	kube := fake.NewClientset()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	t.Cleanup(broadcaster.Shutdown)
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "cloud-controller-manager"})
	fc := frameworktest.NewFakeCloud()
	lb := newLB(t, fc, &framework.Env{Client: kube, Recorder: recorder})

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web",
			Annotations: map[string]string{frameworktest.FakeAnnotationPrefix + "health-check-interval": "abc"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}},
	}
	svc, err := kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := lb.EnsureLoadBalancer(ctx, "c", svc, nil); err == nil {
			t.Fatalf("retry %d with an invalid annotation succeeded", i)
		}
	}
	svc = svc.DeepCopy()
	svc.Annotations[frameworktest.FakeAnnotationPrefix+"health-check-interval"] = "9000s"
	if _, err := lb.EnsureLoadBalancer(ctx, "c", svc, nil); err == nil {
		t.Fatal("Ensure with the second invalid value succeeded")
	}

	var got []string
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = got[:0]
		for _, e := range list.Items {
			got = append(got, fmt.Sprintf("%s %s (x%d): %s", e.Type, e.Reason, e.Count, e.Message))
		}
		return strings.Contains(strings.Join(got, "\n"), `"9000s"`), nil
	})
	if err != nil {
		t.Fatalf("the second problem never reached the API; its Events:\n%s", strings.Join(got, "\n"))
	}
	if len(got) != 2 {
		t.Errorf("Events in the API = %d, want 2 (one per problem):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestEveryCheckInOneWarning: a bad annotation does not hide what the
// config's and the driver's checks find; one Warning lists them all and
// nothing is written.
func TestEveryCheckInOneWarning(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, map[string]string{
		frameworktest.FakeAnnotationPrefix + "health-check-interval": "abc",
		frameworktest.FakeAnnotationPrefix + "hostname":              "not a hostname",
	})
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Protocol: corev1.ProtocolSCTP, Port: 9000, NodePort: 30900})
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("Ensure succeeded")
	}
	events := strings.Split(f.events(), "\n")
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning InvalidAnnotation") {
		t.Fatalf("events = %q; want one Warning InvalidAnnotation", events)
	}
	for _, want := range []string{"health-check-interval", "hostname", "port 9000"} {
		if !strings.Contains(events[0], want) {
			t.Errorf("the Warning does not mention %q: %s", want, events[0])
		}
	}
	if w := f.cloud.Writes(); w != 0 || len(f.cloud.LoadBalancers()) != 0 {
		t.Errorf("invalid Service: %d writes, %d LBs", w, len(f.cloud.LoadBalancers()))
	}
}

// TestLongValuesAreShortenedInEvents: an annotation value of 10 KB is not
// echoed whole.
func TestLongValuesAreShortenedInEvents(t *testing.T) {
	f := newLBFixture(t)
	long := strings.Repeat("x", 10<<10)
	svc := f.service(t, map[string]string{frameworktest.FakeAnnotationPrefix + "health-check-interval": long})
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("Ensure succeeded")
	}
	ev := f.events()
	if len(ev) > 512 || !strings.Contains(ev, "10240 bytes") {
		t.Errorf("Event of %d bytes; want it short and saying how long the value is: %.600s", len(ev), ev)
	}
}

// TestFollowsWhileProvisioning: following, a create the cloud is still
// working on succeeds at once with no Warning (the service controller
// would raise one for a retry) and no worker held; the Service carries
// ProgressAnnotation until the load balancer is ready, and its removal is
// the next sync's cue, which reports the address.
func TestFollowsWhileProvisioning(t *testing.T) {
	f := newLBFixtureEnv(t, &framework.Env{LoadBalancerFollow: true}, 2)
	svc := f.service(t, nil)
	status, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	if err != nil || len(status.Ingress) != 0 {
		t.Fatalf("EnsureLoadBalancer = %+v, %v; want success, no address yet", status, err)
	}
	id := f.cloud.LoadBalancers()[0].ID
	if got := f.get(t, svc).Annotations[framework.ProgressAnnotation]; got != id+" is provisioning" {
		t.Errorf("%s = %q, want %q", framework.ProgressAnnotation, got, id+" is provisioning")
	}
	ev := f.events()
	if strings.Contains(ev, "Warning") || !strings.Contains(ev, "Normal ProvisioningLoadBalancer") {
		t.Errorf("events = %q; want a Normal ProvisioningLoadBalancer and no Warning", ev)
	}

	// The follower looks at the load balancer (which settles on its second
	// read) and hands the Service back by removing the annotation.
	err = wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, pending := f.get(t, svc).Annotations[framework.ProgressAnnotation]
		return !pending, nil
	})
	if err != nil {
		t.Fatalf("%s still on the Service: %v", framework.ProgressAnnotation, err)
	}
	status, err = f.lb.EnsureLoadBalancer(f.ctx, "c", f.get(t, svc), f.nodes)
	if err != nil || len(status.Ingress) != 1 {
		t.Fatalf("the next sync: EnsureLoadBalancer = %+v, %v; want the address", status, err)
	}
	if ev := f.events(); strings.Contains(ev, "Warning") {
		t.Errorf("events = %q; want no Warning", ev)
	}
	if n, w := len(f.cloud.LoadBalancers()), f.cloud.Writes(); n != 1 || w != 1 {
		t.Errorf("cloud: %d LBs, %d writes; want 1 and 1", n, w)
	}
}

// TestPendingPublishesAddressesAndFollows: a load balancer that works but
// has something pending (a certificate being issued) is no failure: the
// sync succeeds with its address, a Normal Event says what is pending, and
// the Service is handed back once it clears. The address carries the
// driver's DNS name.
func TestPendingPublishesAddressesAndFollows(t *testing.T) {
	f := newLBFixtureEnv(t, &framework.Env{LoadBalancerFollow: true}, 0)
	svc := f.service(t, nil)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err != nil {
		t.Fatal(err)
	}
	id := f.cloud.LoadBalancers()[0].ID
	f.cloud.SetDNSName(id, "lb.example.net")
	f.cloud.SetPending(id, "is waiting for its certificate: www.example.com is pending")
	// Followed while provisioning, the Service is handed back when that
	// ends, though something is pending: that may need the sync's Update
	// (a certificate needs the address the sync maps, say).
	f.cloud.Advance()
	f.waitHandedBack(t, svc)

	status, err := f.lb.EnsureLoadBalancer(f.ctx, "c", f.get(t, svc), f.nodes)
	if err != nil || len(status.Ingress) != 1 || status.Ingress[0].IP == "" || status.Ingress[0].Hostname != "lb.example.net" {
		t.Fatalf("EnsureLoadBalancer = %+v, %v; want success with the address and its DNS name", status, err)
	}
	want := id + " is waiting for its certificate: www.example.com is pending"
	if got := f.get(t, svc).Annotations[framework.ProgressAnnotation]; got != want {
		t.Errorf("%s = %q, want %q", framework.ProgressAnnotation, got, want)
	}
	if ev := f.events(); strings.Contains(ev, "Warning") || !strings.Contains(ev, "Normal ProvisioningLoadBalancer Load balancer "+want) {
		t.Errorf("events = %q; want a Normal event saying what is pending, and no Warning", ev)
	}

	f.cloud.SetPending(id, "")
	f.waitHandedBack(t, svc)
}

// waitHandedBack waits for the follower to remove ProgressAnnotation from
// svc.
func (f *lbFixture) waitHandedBack(t *testing.T, svc *corev1.Service) {
	t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, pending := f.get(t, svc).Annotations[framework.ProgressAnnotation]
		return !pending, nil
	})
	if err != nil {
		t.Fatalf("%s still on the Service: %v", framework.ProgressAnnotation, err)
	}
}

// TestCopiedIDAnnotationIsNotTheServicesLB: GetLoadBalancer does not report
// another Service's load balancer as the copy's.
func TestCopiedIDAnnotationIsNotTheServicesLB(t *testing.T) {
	f := newLBFixture(t)
	owner := f.service(t, nil)
	f.cloud.Advance()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", owner, f.nodes); err == nil {
		t.Fatal("first Ensure did not retry")
	}
	f.cloud.Advance()
	id := f.cloud.LoadBalancers()[0].ID
	copied := f.serviceNamed(t, "copy", "uid-copy", map[string]string{idAnnotation: id})
	if _, exists, err := f.lb.GetLoadBalancer(f.ctx, "c", copied); err != nil || exists {
		t.Errorf("GetLoadBalancer(copy) = %v, %v; want false, nil", exists, err)
	}
	_, err := f.lb.EnsureLoadBalancer(f.ctx, "c", copied, f.nodes)
	if err == nil || !strings.Contains(err.Error(), "belongs to Service default/web") {
		t.Errorf("EnsureLoadBalancer(copy) = %v; want an error naming the owner", err)
	}
	if ev := f.events(); !strings.Contains(ev, "Warning LoadBalancerInUse") {
		t.Errorf("events = %q; want a Warning LoadBalancerInUse", ev)
	}
}

func newLB(t *testing.T, fc *frameworktest.FakeCloud, env *framework.Env) cloudprovider.LoadBalancer {
	t.Helper()
	cloud, err := framework.NewCloud(context.Background(), frameworktest.NewFakeProvider(fc), env)
	if err != nil {
		t.Fatal(err)
	}
	lb, ok := cloud.LoadBalancer()
	if !ok {
		t.Fatal("no load balancer")
	}
	return lb
}

// TestRefusedServiceRecordsItsLoadBalancer: a CCM created the Service's
// load balancer and died before recording its ID; the Service has since
// become invalid. The next sync writes nothing to the cloud and warns,
// but records the ID of the load balancer the Service owns, so none of the
// cloud's load balancers is named by no Service.
func TestRefusedServiceRecordsItsLoadBalancer(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, nil)
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("first Ensure on a provisioning LB succeeded; want a retry")
	}
	lbs := f.cloud.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("cloud holds %d LBs, want 1", len(lbs))
	}
	// The annotation as a CCM that died before writing it left it, and
	// an invalid value added since.
	svc = f.get(t, svc)
	delete(svc.Annotations, idAnnotation)
	svc.Annotations[frameworktest.FakeAnnotationPrefix+"health-check-interval"] = "abc"
	svc, err := f.kube.CoreV1().Services("default").Update(f.ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	writes := f.cloud.Writes()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Fatal("Ensure of an invalid Service succeeded")
	}
	if w := f.cloud.Writes() - writes; w != 0 {
		t.Errorf("the invalid Service's sync made %d cloud writes, want 0", w)
	}
	if ev := f.events(); !strings.Contains(ev, "Warning InvalidAnnotation") {
		t.Errorf("events = %q; want a Warning InvalidAnnotation", ev)
	}
	if got := f.get(t, svc).Annotations[idAnnotation]; got != lbs[0].ID {
		t.Errorf("ID annotation = %q, want the Service's own load balancer %s", got, lbs[0].ID)
	}
	if n := len(f.cloud.LoadBalancers()); n != 1 {
		t.Errorf("cloud holds %d LBs, want 1", n)
	}
}

// TestServiceDeletedBeforeItsIDIsRecorded: the Service is deleted while
// its first sync creates the load balancer, so the ID never reaches it (a
// soak saw this: the service controller's informer still held the Service).
// The sync deletes the load balancer it made instead of leaving one that
// no Service names, and fails, so the service controller moves on to the
// deletion.
func TestServiceDeletedBeforeItsIDIsRecorded(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, nil)
	if err := f.kube.CoreV1().Services("default").Delete(f.ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, f.nodes)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("EnsureLoadBalancer of a deleted Service = %v; want an error saying it is not found", err)
	}
	if lbs := f.cloud.LoadBalancers(); len(lbs) != 0 {
		t.Errorf("cloud holds %d LBs after the sync of a deleted Service, want 0: %+v", len(lbs), lbs)
	}
	if ev := f.events(); !strings.Contains(ev, "Normal DeletedLoadBalancer") {
		t.Errorf("events = %q; want a Normal DeletedLoadBalancer", ev)
	}
}

// TestNodeSyncOfADeletedService: the service controller's node sync
// updates the Services it cached, one of which its own sync has just
// deleted with its load balancer. No load balancer to update is then no
// error (the service controller would retry it and warn), while for a
// Service that still wants one it is.
func TestNodeSyncOfADeletedService(t *testing.T) {
	f := newLBFixture(t)
	svc := f.service(t, nil)
	if err := f.lb.UpdateLoadBalancer(f.ctx, "c", svc, f.nodes); err == nil {
		t.Error("UpdateLoadBalancer of a Service without its load balancer yet = nil; want an error (its own sync creates it)")
	}
	if err := f.kube.CoreV1().Services("default").Delete(f.ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.lb.UpdateLoadBalancer(f.ctx, "c", svc, f.nodes); err != nil {
		t.Errorf("UpdateLoadBalancer of a deleted Service = %v; want nil", err)
	}
	if n := len(f.cloud.LoadBalancers()); n != 0 {
		t.Errorf("cloud holds %d LBs, want 0: the node sync never creates", n)
	}
}
