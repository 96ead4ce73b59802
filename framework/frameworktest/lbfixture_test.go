package frameworktest_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestLBFixture drives the fake provider's load balancer through its life
// with the fixture and checks what the cloud and the API server hold after
// each step.
func TestLBFixture(t *testing.T) {
	target := frameworktest.FakeHarness{}.Setup(t)
	cloud := target.Cloud.(*frameworktest.FakeCloud)
	f := frameworktest.NewLBFixture(t, target, frameworktest.LBOptions{
		Nodes:       []string{"node-b", "node-a"},
		NewProvider: func() framework.Provider { return frameworktest.NewFakeProvider(cloud) },
	})
	if len(f.Nodes) != 2 || f.Nodes[0].Name != "node-b" || !strings.HasPrefix(f.Nodes[0].Spec.ProviderID, "fake://") {
		t.Fatalf("nodes = %+v, want node-b and node-a with fake:// providerIDs", f.Nodes)
	}
	svc := f.Service(t, "web", map[string]string{frameworktest.FakeAnnotationPrefix + "proxy-protocol": "true"})
	if svc.UID != "uid-web" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 30080 {
		t.Errorf("stored Service = %+v, want uid-web with one port to 30080", svc)
	}

	status, syncs := f.EnsureReadySyncs(t, svc)
	if syncs != 2 {
		t.Errorf("ready after %d syncs, want 2: a retry while the fake cloud provisions, then ready after Advance", syncs)
	}
	lb := f.OnlyLoadBalancer(t)
	if want := []string{"TCP:80->:30080"}; !slices.Equal(lb.Listeners, want) || len(lb.Members) != 2 {
		t.Errorf("load balancer = %+v, want listeners %v and two members", lb, want)
	}
	if got := f.Fresh(t, svc).Annotations[frameworktest.FakeAnnotationPrefix+"load-balancer-id"]; got != lb.ID {
		t.Errorf("ID annotation = %q, want %q", got, lb.ID)
	}
	if len(status.Ingress) != 1 {
		t.Errorf("status = %+v, want one ingress", status)
	}
	if n := f.WritesDuring(func() { f.EnsureReady(t, svc) }); n != 0 {
		t.Errorf("a sync with nothing changed made %d writes", n)
	}

	f.Nodes = f.Nodes[:1]
	if err := f.Update(t, svc); err != nil {
		t.Fatal(err)
	}
	if got := f.OnlyLoadBalancer(t).Members; len(got) != 1 {
		t.Errorf("members after a node left = %v, want one", got)
	}
	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations[frameworktest.FakeAnnotationPrefix+"health-check-interval"] = "abc"
	})
	if _, err := f.Start(t).EnsureLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes); err == nil {
		t.Error("another CCM synced a Service with an invalid annotation")
	}
	if evs := f.Drain(); !slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, "Warning InvalidAnnotation") }) {
		t.Errorf("events = %q, want a Warning InvalidAnnotation", evs)
	}
	if evs := f.Drain(); len(evs) != 0 {
		t.Errorf("a second Drain returned %q", evs)
	}

	f.DeleteDone(t, svc)
	if lbs := cloud.LoadBalancers(); len(lbs) != 0 {
		t.Errorf("after DeleteDone the cloud holds %+v", lbs)
	}
}
