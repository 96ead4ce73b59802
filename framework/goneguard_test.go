package framework_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// guardCluster is a FakeCloud, a cluster of Nodes on its instances, and a
// CCM's InstancesV2 with the credential of one account.
type guardCluster struct {
	t        *testing.T
	ctx      context.Context
	cloud    *frameworktest.FakeCloud
	kube     *fake.Clientset
	recorder *record.FakeRecorder
	ids      map[string]string // node name -> instance ID
}

// newGuardCluster adds n instances and their initialized Nodes: ready
// ones NotReady when notReady.
func newGuardCluster(t *testing.T, n int, notReady bool) *guardCluster {
	_, ctx := ktesting.NewTestContext(t)
	g := &guardCluster{t: t, ctx: ctx, cloud: frameworktest.NewFakeCloud(), kube: fake.NewClientset(),
		recorder: record.NewFakeRecorder(1000), ids: map[string]string{}}
	for k := range n {
		name := fmt.Sprintf("node-%d", k)
		g.ids[name] = g.cloud.AddInstance(name)
		status := corev1.ConditionTrue
		if notReady {
			status = corev1.ConditionUnknown
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec:   corev1.NodeSpec{ProviderID: "fake://" + g.ids[name]},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
		if _, err := g.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// ccm starts a CCM's InstancesV2 with env settings (the account) and
// options.
func (g *guardCluster) ccm(settings map[string]string, tweak func(*framework.Env)) cloudprovider.InstancesV2 {
	g.t.Helper()
	env := &framework.Env{Client: g.kube, Recorder: g.recorder, InstanceCacheTTL: -1,
		LookupEnv: func(k string) (string, bool) { v, ok := settings[k]; return v, ok }}
	if tweak != nil {
		tweak(env)
	}
	cloud, err := framework.NewCloud(g.ctx, frameworktest.NewFakeProvider(g.cloud), env)
	if err != nil {
		g.t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	return inst
}

// sweep asks whether every Node's VM exists, as a node lifecycle sweep
// does, and returns the Nodes reported gone and those with an error.
func (g *guardCluster) sweep(inst cloudprovider.InstancesV2) (gone, failed []string) {
	g.t.Helper()
	nodes, err := g.kube.CoreV1().Nodes().List(g.ctx, metav1.ListOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	for k := range nodes.Items {
		n := &nodes.Items[k]
		exists, err := inst.InstanceExists(g.ctx, n)
		switch {
		case err != nil:
			failed = append(failed, n.Name)
		case !exists:
			gone = append(gone, n.Name)
		}
	}
	return gone, failed
}

func (g *guardCluster) events() []string {
	var out []string
	for {
		select {
		case e := <-g.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// withheldGauge is cloudprovider_node_deletion_withheld{provider="fake"}.
func withheldGauge(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "cloudprovider_node_deletion_withheld" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == "fake" {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatal("no cloudprovider_node_deletion_withheld{provider=\"fake\"}")
	return 0
}

func TestGuardKeepsEveryNodeForAnotherAccount(t *testing.T) {
	g := newGuardCluster(t, 4, true)
	other := g.ccm(g.cloud.OtherAccount().Env, nil)
	for range 3 {
		gone, failed := g.sweep(other)
		if len(gone) != 0 || len(failed) != 4 {
			t.Fatalf("with another account's credential: gone %v, failed %v; want none gone, all 4 kept with an error", gone, failed)
		}
	}
	events := g.events()
	var nodeWarnings, leaseWarnings int
	for _, e := range events {
		switch {
		case strings.HasPrefix(e, "Warning "+framework.ReasonDeletionWithheld+" "):
			nodeWarnings++
			if !strings.Contains(e, "another account") {
				t.Errorf("Node warning does not name the likely cause: %s", e)
			}
		case strings.HasPrefix(e, "Warning "+framework.ReasonCloudCannotSeeCluster+" "):
			leaseWarnings++
		}
	}
	if nodeWarnings != 4 || leaseWarnings != 1 {
		t.Errorf("events over three sweeps: %d Node warnings, %d component warnings; want 4 (one per Node) and 1:\n%s",
			nodeWarnings, leaseWarnings, strings.Join(events, "\n"))
	}
	if v := withheldGauge(t); v != 4 {
		t.Errorf("cloudprovider_node_deletion_withheld = %v, want 4", v)
	}

	// The right credential again: normal at the first check.
	right := g.ccm(nil, nil)
	if gone, failed := g.sweep(right); len(gone)+len(failed) != 0 {
		t.Fatalf("with the right credential: gone %v, failed %v; want every Node's VM found", gone, failed)
	}
}

func TestGuardEndsAtTheFirstCheckThatSeesTheCluster(t *testing.T) {
	g := newGuardCluster(t, 3, true)
	inst := g.ccm(nil, nil)
	// The cloud says 404 to everything, as another account's credential
	// does; then answers again, and one VM is really gone.
	restore := g.cloud.Fail(frameworktest.Fault{Status: 404})
	g.cloud.Broken.NotFoundOnAny404 = true
	if gone, failed := g.sweep(inst); len(gone) != 0 || len(failed) != 3 {
		t.Fatalf("while the cloud finds nothing: gone %v, failed %v; want none gone", gone, failed)
	}
	restore()
	g.cloud.DeleteInstance(g.ids["node-1"])
	gone, failed := g.sweep(inst)
	if !slices.Equal(gone, []string{"node-1"}) || len(failed) != 0 {
		t.Fatalf("once the cloud sees the cluster: gone %v, failed %v; want node-1 gone", gone, failed)
	}
	if v := withheldGauge(t); v != 0 {
		t.Errorf("cloudprovider_node_deletion_withheld = %v after the episode, want 0", v)
	}
	if !slices.ContainsFunc(g.events(), func(e string) bool { return strings.HasPrefix(e, "Normal "+framework.ReasonCloudSeesCluster) }) {
		t.Error("no Normal CloudSeesCluster event when the episode ended")
	}
}

func TestGuardLetsAScaleDownThrough(t *testing.T) {
	for _, tt := range []struct {
		desc     string
		nodes    int
		delete   []string
		notReady bool
	}{
		{desc: "one VM", nodes: 4, delete: []string{"node-2"}},
		{desc: "half the cluster at once", nodes: 8, delete: []string{"node-0", "node-2", "node-4", "node-6"}},
		// Every Node NotReady, and the first peers in name order gone:
		// the guard lists after GuardPeerLookups misses.
		{desc: "all NotReady, the first peers gone", nodes: 8, delete: []string{"node-0", "node-1", "node-2", "node-3", "node-4"}, notReady: true},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			g := newGuardCluster(t, tt.nodes, tt.notReady)
			inst := g.ccm(nil, nil)
			for _, n := range tt.delete {
				g.cloud.DeleteInstance(g.ids[n])
			}
			gone, failed := g.sweep(inst)
			slices.Sort(gone)
			if !slices.Equal(gone, tt.delete) || len(failed) != 0 {
				t.Fatalf("gone %v, failed %v; want exactly %v gone", gone, failed, tt.delete)
			}
		})
	}
}

func TestGuardWithOnePeerlessNode(t *testing.T) {
	g := newGuardCluster(t, 1, true)
	g.cloud.DeleteInstance(g.ids["node-0"])
	if gone, failed := g.sweep(g.ccm(nil, nil)); len(gone) != 0 || len(failed) != 1 {
		t.Errorf("a cluster's only Node: gone %v, failed %v; want it kept (nothing to check the cloud's view against)", gone, failed)
	}
	off := g.ccm(nil, func(e *framework.Env) { e.NoNodeDeletionGuard = true })
	if gone, _ := g.sweep(off); !slices.Equal(gone, []string{"node-0"}) {
		t.Errorf("with --node-deletion-guard=false: gone %v, want node-0", gone)
	}
}

// peersFail are instances of which "gone" does not exist and every other
// lookup fails.
type peersFail struct{}

func (peersFail) InstanceByID(_ context.Context, id string) (*framework.Instance, error) {
	if id == "gone" {
		return nil, framework.NotFound("no instance %s", id)
	}
	return nil, errors.New("500 Internal Server Error")
}
func (p peersFail) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	return p.InstanceByID(ctx, name)
}
func (peersFail) ListInstances(context.Context) ([]*framework.Instance, error) {
	return nil, errors.New("500 Internal Server Error")
}

type peersFailProvider struct{}

func (peersFailProvider) Name() string                               { return "fake" }
func (peersFailProvider) Init(context.Context, *framework.Env) error { return nil }
func (peersFailProvider) Instances() framework.Instances             { return peersFail{} }

func TestGuardKeepsTheNodeWhenPeersCannotBeChecked(t *testing.T) {
	g := newGuardCluster(t, 3, true)
	cloud, err := framework.NewCloud(g.ctx, peersFailProvider{}, &framework.Env{Client: g.kube, InstanceCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gone"}, Spec: corev1.NodeSpec{ProviderID: "fake://gone"}}
	exists, err := inst.InstanceExists(g.ctx, node)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("InstanceExists = %v, %v while the peers' lookups fail; want their error", exists, err)
	}
}
