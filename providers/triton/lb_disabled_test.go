package triton_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestNoCNS: an account without CNS (triton_cns_enabled off) cannot have
// load balancers. In the default mode start-up fails, saying so and
// naming the setting that runs the CCM without them; with
// TRITON_LB_MODE=none it starts, has no load balancers (so the framework
// runs no service controller), and initializes Nodes as usual.
func TestNoCNS(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{CNSDisabled: true})
	m := sim.AddMachine(tritonsim.Machine{Name: "node-a"})
	for _, mode := range []string{"", "auto", "cns", "moirai"} {
		_, err := start(t, sim, map[string]string{"TRITON_LB_MODE": mode})
		wantErr(t, err, "triton_cns_enabled is off", "triton account update triton_cns_enabled=true", "TRITON_LB_MODE=none")
	}

	vars := with(sim.Env(sim.URL()), map[string]string{"TRITON_LB_MODE": "none"})
	p := triton.New()
	cloud, err := framework.NewCloud(ctx(t), p, &framework.Env{
		ClusterName: "test",
		LookupEnv:   func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:    cloudapi.Options{MaxRetries: -1},
	})
	if err != nil {
		t.Fatalf("Init with TRITON_LB_MODE=none on an account without CNS: %v", err)
	}
	if lb := p.LoadBalancer(); lb != nil {
		t.Errorf("LoadBalancer() = %T, want nil", lb)
	}
	if _, ok := cloud.LoadBalancer(); ok {
		t.Error("the cloud has load balancers with TRITON_LB_MODE=none")
	}
	inst, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("the cloud has no InstancesV2")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	md, err := inst.InstanceMetadata(ctx(t), node)
	if err != nil {
		t.Fatalf("InstanceMetadata: %v", err)
	}
	if md.ProviderID != "triton://"+m.ID || md.Zone == "" || len(md.NodeAddresses) == 0 {
		t.Errorf("metadata %+v, want providerID triton://%s, a zone and addresses", md, m.ID)
	}
	if exists, err := inst.InstanceExists(ctx(t), node); err != nil || !exists {
		t.Errorf("InstanceExists = %v, %v; want true", exists, err)
	}

	// A bad mode is refused by name, listing the good ones.
	_, err = start(t, sim, map[string]string{"TRITON_LB_MODE": "off"})
	wantErr(t, err, `TRITON_LB_MODE: "off" is not one of moirai, cns, auto, none`)
}

// TestLoadBalancersDisabledWarning: with TRITON_LB_MODE=none, a Service of
// type LoadBalancer gets one Warning Event saying why it gets no address
// (at start for one there already, which also learns why its deletion
// would wait for its cleanup finalizer; on creation or a change of type
// for others); an update of a warned Service, another type, or a Service
// another implementation serves (loadBalancerClass) gets none. In another
// mode the controller has nothing to do.
func TestLoadBalancersDisabledWarning(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{CNSDisabled: true})
	// A Service whose load balancer was made in another mode, before the
	// switch to none: its deletion waits for the cleanup finalizer.
	before := lbService("before", corev1.ServiceTypeLoadBalancer, nil)
	before.Finalizers = []string{"service.kubernetes.io/load-balancer-cleanup"}
	kube := frameworktest.NewClientset(before)
	p := mustStart(t, sim, map[string]string{"TRITON_LB_MODE": "none"})
	ctrl := controllerNamed(t, p, triton.LBDisabledControllerName)
	recorder := record.NewFakeRecorder(16)
	env := &framework.Env{Client: kube, Informers: informers.NewSharedInformerFactory(kube, 0), Recorder: recorder}
	runCtx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(runCtx, env) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})

	if e := wantWarning(t, recorder, "before"); !strings.Contains(e, "finalizer service.kubernetes.io/load-balancer-cleanup") {
		t.Errorf("Event %q on a Service with the cleanup finalizer does not mention it", e)
	}
	class := "example.com/other-lb"
	for _, svc := range []*corev1.Service{
		lbService("web", corev1.ServiceTypeLoadBalancer, nil),
		lbService("internal", corev1.ServiceTypeClusterIP, nil),
		lbService("theirs", corev1.ServiceTypeLoadBalancer, &class),
	} {
		if _, err := kube.CoreV1().Services("default").Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if e := wantWarning(t, recorder, "web"); strings.Contains(e, "finalizer") {
		t.Errorf("Event %q on a Service without a finalizer mentions one", e)
	}

	// An update of a warned Service: no second Warning. A Service changed
	// to type LoadBalancer: one.
	updateService(t, kube, "web", func(s *corev1.Service) { s.Labels = map[string]string{"app": "web"} })
	updateService(t, kube, "internal", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer })
	wantWarning(t, recorder, "internal")
	wantNoEvent(t, recorder)

	// In another mode the controller ends at once, watching nothing.
	other := mustStart(t, tritonsim.NewServer(t, tritonsim.Options{}), map[string]string{"TRITON_LB_MODE": "cns"})
	otherEnv := &framework.Env{Client: kube, Informers: informers.NewSharedInformerFactory(kube, 0), Recorder: recorder}
	if err := controllerNamed(t, other, triton.LBDisabledControllerName).Run(ctx(t), otherEnv); err != nil {
		t.Errorf("controller in mode cns: %v", err)
	}
	wantNoEvent(t, recorder)
}

func lbService(name string, typ corev1.ServiceType, class *string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.ServiceSpec{Type: typ, LoadBalancerClass: class,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}}},
	}
}

func updateService(t *testing.T, kube *fake.Clientset, name string, mutate func(*corev1.Service)) {
	t.Helper()
	svc, err := kube.CoreV1().Services("default").Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(svc)
	if _, err := kube.CoreV1().Services("default").Update(ctx(t), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func controllerNamed(t *testing.T, p *triton.Provider, name string) framework.Controller {
	t.Helper()
	cs := p.Controllers()
	i := slices.IndexFunc(cs, func(c framework.Controller) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no controller %s", name)
	}
	return cs[i]
}

// wantWarning waits for the next Event, which must be the Warning on
// Service name, and returns it. The fake recorder does not say which
// object an Event is on, so the tests make them one at a time.
func wantWarning(t *testing.T, r *record.FakeRecorder, name string) string {
	t.Helper()
	select {
	case e := <-r.Events:
		if !strings.HasPrefix(e, "Warning "+triton.EventLoadBalancersDisabled+" ") ||
			!strings.Contains(e, "TRITON_LB_MODE=none") || !strings.Contains(e, "CNS") || !strings.Contains(e, "triton_cns_enabled=true") {
			t.Errorf("Event %q for Service %s, want a Warning %s naming TRITON_LB_MODE=none and CNS", e, name, triton.EventLoadBalancersDisabled)
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("no Warning for Service %s", name)
	}
	return ""
}

// wantNoEvent checks no Event comes within a short while.
func wantNoEvent(t *testing.T, r *record.FakeRecorder) {
	t.Helper()
	select {
	case e := <-r.Events:
		t.Errorf("unexpected Event %q", e)
	case <-time.After(200 * time.Millisecond):
	}
}
