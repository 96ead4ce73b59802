package triton_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestDrainController: a cordoned or NotReady node of a CNS load balancer
// gets triton.cns.status=down (CNS then leaves it out of the Service's
// name), and up again when it recovers; a machine the load balancers do
// not use is left alone.
func TestDrainController(t *testing.T) {
	f := newLBFixture(t, tritonsim.Options{}, map[string]string{"TRITON_LB_MODE": "cns"})
	other := f.sim.Cloud().AddInstance("not-a-target")
	nodes := append(f.Nodes, frameworktest.Node("not-a-target", "triton://"+other))
	for _, n := range nodes {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if _, err := f.Kube.CoreV1().Nodes().Create(f.Ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	status := f.EnsureReady(t, f.Service(t, "api", nil))
	host := status.Ingress[0].Hostname

	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("drain controller: %v", err)
		}
	})
	env := f.Cloud.Env()
	env.Informers = informers.NewSharedInformerFactory(f.Kube, 0)
	c := f.provider().Controllers()[0]
	if c.Name != triton.DrainControllerName {
		t.Fatalf("controller %q", c.Name)
	}
	go func() { done <- c.Run(ctx, env) }()

	a, b := f.Nodes[1], f.Nodes[0]
	setNode(t, f, a.Name, func(n *corev1.Node) { n.Spec.Unschedulable = true })
	setNode(t, f, "not-a-target", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	waitStatus(t, f, machineID(a), "down")
	if got := f.sim.ResolveCNS(host).Machines; !sameSet(got, []string{machineID(b)}) {
		t.Errorf("with node a cordoned %s resolves to %v", host, got)
	}
	setNode(t, f, b.Name, func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionUnknown })
	waitStatus(t, f, machineID(b), "down")

	setNode(t, f, a.Name, func(n *corev1.Node) { n.Spec.Unschedulable = false })
	setNode(t, f, b.Name, func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionTrue })
	waitStatus(t, f, machineID(a), "up")
	waitStatus(t, f, machineID(b), "up")
	if got := f.sim.ResolveCNS(host).Machines; !sameSet(got, []string{machineID(a), machineID(b)}) {
		t.Errorf("with both nodes back %s resolves to %v", host, got)
	}
	if m, _ := f.sim.Machine(other); m.Metadata["triton.cns.status"] != "" {
		t.Errorf("a machine no load balancer uses got triton.cns.status %q", m.Metadata["triton.cns.status"])
	}
}

func setNode(t *testing.T, f *lbFixture, name string, mutate func(*corev1.Node)) {
	t.Helper()
	n, err := f.Kube.CoreV1().Nodes().Get(f.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(n)
	if _, err := f.Kube.CoreV1().Nodes().Update(f.Ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitStatus waits for the controller to set the machine's
// triton.cns.status.
func waitStatus(t *testing.T, f *lbFixture, id, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(f.Ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		m, _ := f.sim.Machine(id)
		got = m.Metadata["triton.cns.status"]
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("machine %s triton.cns.status %q, want %q", id, got, want)
	}
}
