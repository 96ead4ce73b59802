package framework_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

func newFakeCloud(t testing.TB, ttl time.Duration) (*frameworktest.FakeCloud, cloudprovider.InstancesV2, context.Context) {
	t.Helper()
	fc := frameworktest.NewFakeCloud()
	_, ctx := ktesting.NewTestContext(t)
	return fc, newInstances(t, fc, ttl), ctx
}

// newInstances builds the framework's InstancesV2 (with a new cache) over fc.
func newInstances(t testing.TB, fc *frameworktest.FakeCloud, ttl time.Duration) cloudprovider.InstancesV2 {
	t.Helper()
	cloud, err := framework.NewCloud(context.Background(), frameworktest.NewFakeProvider(fc), &framework.Env{InstanceCacheTTL: ttl, NoNodeDeletionGuard: true})
	if err != nil {
		t.Fatal(err)
	}
	inst, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("no InstancesV2")
	}
	return inst
}

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestInstanceExistsOnlyFalseOnNotFound(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, -1)
	id := fc.AddInstance("n0")
	tests := []struct {
		name      string
		fault     *frameworktest.Fault
		deleted   bool
		wantExist bool
		wantErr   bool
	}{
		{name: "running", wantExist: true},
		{name: "500", fault: &frameworktest.FaultServerError, wantErr: true},
		{name: "401", fault: &frameworktest.FaultUnauthorized, wantErr: true},
		{name: "timeout", fault: &frameworktest.FaultTimeout, wantErr: true},
		{name: "not found", deleted: true, wantExist: false},
	}
	for _, tc := range tests {
		for _, n := range []*corev1.Node{node("n0", "fake://"+id), node("n0", "")} {
			t.Run(fmt.Sprintf("%s/providerID=%q", tc.name, n.Spec.ProviderID), func(t *testing.T) {
				if tc.fault != nil {
					defer fc.Fail(*tc.fault)()
				}
				if tc.deleted {
					fc.DeleteInstance(id)
				}
				exists, err := inst.InstanceExists(ctx, n)
				if (err != nil) != tc.wantErr || exists != tc.wantExist {
					t.Fatalf("InstanceExists = %v, %v; want exists=%v, error=%v", exists, err, tc.wantExist, tc.wantErr)
				}
			})
		}
	}
}

func TestInstanceExistsRejectsForeignProviderID(t *testing.T) {
	_, inst, ctx := newFakeCloud(t, -1)
	exists, err := inst.InstanceExists(ctx, node("n0", "aws:///us-east-1a/i-123"))
	if err == nil || exists {
		t.Fatalf("InstanceExists(foreign providerID) = %v, %v; want an error, never false", exists, err)
	}
}

func TestInstanceCacheServesLookupsFromOneList(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, time.Hour)
	const n = 250 // three pages of 100
	nodes := make([]*corev1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = node(name, "fake://"+fc.AddInstance(name))
	}
	var wg sync.WaitGroup
	for _, nd := range nodes {
		wg.Go(func() {
			if _, err := inst.InstanceMetadata(ctx, nd); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	calls := fc.Calls()
	if calls["instances.list"] != 3 || calls["instances.get"] != 0 {
		t.Fatalf("%d concurrent lookups cost %v; want 3 list pages and no GETs", n, calls)
	}
}

func TestInstanceCacheMissIsNotNotFound(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, time.Hour)
	first := fc.AddInstance("old")
	if _, err := inst.InstanceMetadata(ctx, node("old", "fake://"+first)); err != nil {
		t.Fatal(err)
	}
	// An instance created after the list was taken is found by a direct,
	// authoritative lookup instead of being reported missing.
	newer := fc.AddInstance("new")
	if ok, err := inst.InstanceExists(ctx, node("new", "fake://"+newer)); err != nil || !ok {
		t.Fatalf("InstanceExists(instance newer than the cached list) = %v, %v; want true", ok, err)
	}
	if got := fc.Calls()["instances.get"]; got != 1 {
		t.Fatalf("cache miss made %d direct GETs, want 1", got)
	}
}

func TestInstanceCacheFallsBackWhenListFails(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, time.Hour)
	id := fc.AddInstance("n0")
	restore := fc.Fail(frameworktest.FaultServerError)
	if ok, err := inst.InstanceExists(ctx, node("n0", "fake://"+id)); err == nil {
		t.Fatalf("InstanceExists during an outage = %v, nil; want an error", ok)
	}
	restore()
	// The failed list is not retried on every lookup within the TTL; direct
	// lookups answer instead.
	if ok, err := inst.InstanceExists(ctx, node("n0", "fake://"+id)); err != nil || !ok {
		t.Fatalf("InstanceExists after the outage = %v, %v; want true", ok, err)
	}
	if got := fc.Calls()["instances.list"]; got != 1 {
		t.Fatalf("list calls = %d, want 1", got)
	}
}

func TestInstanceMetadata(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, -1)
	id := fc.AddInstance("n0")
	md, err := inst.InstanceMetadata(ctx, node("n0", ""))
	if err != nil {
		t.Fatal(err)
	}
	if md.ProviderID != "fake://"+id || md.InstanceType != "fake-small" || md.Zone != "fake-1a" || md.Region != "fake-1" || len(md.NodeAddresses) != 2 {
		t.Fatalf("InstanceMetadata = %+v", md)
	}
	fc.DeleteInstance(id)
	if _, err := inst.InstanceMetadata(ctx, node("n0", "")); !framework.IsNotFound(err) {
		t.Fatalf("InstanceMetadata(gone) error = %v; want InstanceNotFound", err)
	}
	tainted := node("n0", "fake://"+id)
	tainted.Spec.Taints = []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := inst.InstanceMetadata(ctx, tainted); !framework.IsNotFound(err) {
		t.Fatalf("InstanceMetadata(gone, uninitialized) error = %v; want InstanceNotFound: the node controller must not initialize it", err)
	}
}

// TestInstanceMetadataOfAGoneVMKeepsTheNode: the node controller refreshes
// every initialized Node's addresses and logs an error for each one whose
// InstanceMetadata fails. A VM deleted under its Node (which the node
// lifecycle controller deletes within a period) is routine: the answer is
// what the Node holds, so nothing changes and nothing is logged as an
// error.
func TestInstanceMetadataOfAGoneVMKeepsTheNode(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, -1)
	id := fc.AddInstance("n0")
	n := node("n0", "fake://"+id)
	n.Labels = map[string]string{corev1.LabelInstanceTypeStable: "fake-small", corev1.LabelTopologyZone: "fake-1a", corev1.LabelTopologyRegion: "fake-1"}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.9"}}
	fc.DeleteInstance(id)
	md, err := inst.InstanceMetadata(ctx, n)
	if err != nil {
		t.Fatalf("InstanceMetadata of an initialized Node whose VM is gone = %v; want the Node's own metadata", err)
	}
	want := cloudprovider.InstanceMetadata{ProviderID: n.Spec.ProviderID, InstanceType: "fake-small", Zone: "fake-1a", Region: "fake-1", NodeAddresses: n.Status.Addresses}
	if fmt.Sprint(*md) != fmt.Sprint(want) {
		t.Errorf("InstanceMetadata = %+v, want %+v", *md, want)
	}
	if ok, err := inst.InstanceExists(ctx, n); err != nil || ok {
		t.Errorf("InstanceExists = %v, %v; want false: the lifecycle controller still deletes the Node", ok, err)
	}
}

// BenchmarkInstanceMetadataCached measures what the node controller's
// periodic address refresh costs the cloud: every Node's InstanceMetadata
// within one cache TTL. Reported: cloud API calls per sweep of 1,000 nodes,
// which must be ceil(1000/page) list calls and no GETs.
func BenchmarkInstanceMetadataCached(b *testing.B) {
	const nodes, page = 1000, 100
	fc := frameworktest.NewFakeCloud()
	fc.PageSize = page
	ctx := context.Background()
	list := make([]*corev1.Node, nodes)
	for i := range list {
		name := fmt.Sprintf("node-%d", i)
		list[i] = node(name, "fake://"+fc.AddInstance(name))
	}
	b.ResetTimer()
	var calls int
	for b.Loop() {
		// A fresh cache per sweep: one sweep = one TTL window.
		inst := newInstances(b, fc, time.Hour)
		before := total(fc.Calls())
		for _, n := range list {
			if _, err := inst.InstanceMetadata(ctx, n); err != nil {
				b.Fatal(err)
			}
		}
		calls = total(fc.Calls()) - before
	}
	if want := (nodes + page - 1) / page; calls > want {
		b.Fatalf("%d InstanceMetadata calls cost %d API calls, want <= %d", nodes, calls, want)
	}
	b.ReportMetric(float64(calls), "api-calls/1000-nodes")
	b.ReportMetric(float64(calls)/nodes, "api-calls/lookup")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestInstanceCacheRefusesSharedName: the list holds two instances with a
// Node's name; the lookup by name is an error, never one of them (a Node
// given an unrelated VM's providerID would be deleted with that VM).
func TestInstanceCacheRefusesSharedName(t *testing.T) {
	fc, inst, ctx := newFakeCloud(t, time.Hour)
	a, b := fc.AddInstance("twin"), fc.AddInstance("twin")
	fc.AddInstance("other")
	md, err := inst.InstanceMetadata(ctx, node("twin", ""))
	if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("InstanceMetadata(twin) = %+v, %v; want an error naming %s and %s", md, err, a, b)
	}
	if ok, err := inst.InstanceExists(ctx, node("twin", "")); err == nil {
		t.Fatalf("InstanceExists(twin) = %v, nil; want an error", ok)
	}
	if _, err := inst.InstanceMetadata(ctx, node("other", "")); err != nil {
		t.Fatalf("InstanceMetadata(other): %v", err)
	}
	if calls := fc.Calls(); calls["instances.getByName"] != 0 || calls["instances.list"] != 1 {
		t.Errorf("calls = %v; want one list and no direct lookup by name", calls)
	}
}

// TestInstanceExistsAnswersWithinTheNodeMonitorPeriod: the node lifecycle
// controller asks InstanceExists about a NotReady Node each
// --node-monitor-period; a VM deleted since the cached list is found gone
// from a list no older than the period, not after the cache's TTL, while
// the node controller's metadata lookups keep the TTL's one list.
func TestInstanceExistsAnswersWithinTheNodeMonitorPeriod(t *testing.T) {
	fc := frameworktest.NewFakeCloud()
	_, ctx := ktesting.NewTestContext(t)
	// A period shorter than any two calls: every existence check may list.
	cloud, err := framework.NewCloud(ctx, frameworktest.NewFakeProvider(fc),
		&framework.Env{InstanceCacheTTL: time.Hour, NodeMonitorPeriod: time.Nanosecond, NoNodeDeletionGuard: true})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	keep, gone := node("keep", "fake://"+fc.AddInstance("keep")), node("gone", "fake://"+fc.AddInstance("gone"))
	for _, n := range []*corev1.Node{keep, gone} {
		if _, err := inst.InstanceMetadata(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	fc.DeleteInstance(strings.TrimPrefix(gone.Spec.ProviderID, "fake://"))
	if _, err := inst.InstanceMetadata(ctx, gone); err != nil {
		t.Fatalf("metadata within the TTL: %v; want the cached list's answer", err)
	}
	if ok, err := inst.InstanceExists(ctx, gone); err != nil || ok {
		t.Errorf("InstanceExists(deleted VM) = %v, %v; want false from a list no older than the period", ok, err)
	}
	if ok, err := inst.InstanceExists(ctx, keep); err != nil || !ok {
		t.Errorf("InstanceExists(running VM) = %v, %v; want true", ok, err)
	}
	if calls := fc.Calls(); calls["instances.list"] != 3 || calls["instances.get"] != 1 {
		t.Errorf("calls %v; want a list for the metadata and one per existence check, and one GET of the missing VM", calls)
	}
}

// TestInstanceExistsListsAfterNotReady: a Node that went NotReady after
// the cached list started is checked against a list that starts after
// that, even when the cached one is younger than the node monitor
// period: a VM deleted just before its Node went NotReady goes at the
// first check, not a period later.
func TestInstanceExistsListsAfterNotReady(t *testing.T) {
	fc := frameworktest.NewFakeCloud()
	_, ctx := ktesting.NewTestContext(t)
	cloud, err := framework.NewCloud(ctx, frameworktest.NewFakeProvider(fc),
		&framework.Env{InstanceCacheTTL: time.Hour, NodeMonitorPeriod: time.Hour, NoNodeDeletionGuard: true})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	gone := node("gone", "fake://"+fc.AddInstance("gone"))
	if _, err := inst.InstanceMetadata(ctx, gone); err != nil {
		t.Fatal(err)
	}
	fc.DeleteInstance(strings.TrimPrefix(gone.Spec.ProviderID, "fake://"))
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}
	gone.Status.Conditions = []corev1.NodeCondition{ready}
	if ok, err := inst.InstanceExists(ctx, gone); err != nil || !ok {
		t.Fatalf("InstanceExists(Ready Node) = %v, %v; want true from the cached list", ok, err)
	}
	gone.Status.Conditions[0].Status, gone.Status.Conditions[0].LastTransitionTime = corev1.ConditionUnknown, metav1.Now()
	if ok, err := inst.InstanceExists(ctx, gone); err != nil || ok {
		t.Errorf("InstanceExists(NotReady since the list) = %v, %v; want false from a list started since", ok, err)
	}
	if calls := fc.Calls(); calls["instances.list"] != 2 {
		t.Errorf("calls %v; want the metadata's list and one for the NotReady Node", calls)
	}
}
