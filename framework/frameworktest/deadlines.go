package frameworktest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// RunDeadlines checks that a hung cloud API holds up neither a starting
// CCM nor its node controllers, on the provider h sets up. With every
// request of the cloud held for an hour (or until its client gives up):
//
//   - InitTimeout: framework.NewCloud ends at --cloud-init-timeout with an
//     error naming it, though each request alone would be allowed far
//     longer;
//   - InstanceLookupTimeout: each InstancesV2 call, by providerID and by
//     node name, with the instance cache on and off, ends at
//     --instance-lookup-timeout with an error naming it, never "the
//     instance is gone".
func RunDeadlines(t *testing.T, h Harness) {
	t.Run("InitTimeout", func(t *testing.T) { testInitTimeout(t, h.Setup(t)) })
	for _, v := range []variant{{name: "InstanceCacheOn", instanceCacheTTL: time.Hour}, {name: "InstanceCacheOff", instanceCacheTTL: -1}} {
		t.Run("InstanceLookupTimeout/"+v.name, func(t *testing.T) { testLookupTimeout(t, h.Setup(t), v) })
	}
}

// deadline is the operation deadline the tests set, and deadlineBound how
// long an operation may take with it on a loaded machine.
const (
	deadline      = 500 * time.Millisecond
	deadlineBound = 3 * time.Second
)

// faultHung holds every request for an hour, or until its client gives up.
var faultHung = Fault{Delay: time.Hour}

func testInitTimeout(t *testing.T, target *Target) {
	t.Cleanup(target.Cloud.Fail(faultHung))
	env := newEnv(t, target, fake.NewClientset(), record.NewFakeRecorder(100), variant{})
	env.InitTimeout = deadline
	env.CloudAPI = cloudapi.Options{Timeout: 5 * time.Second}
	_, ctx := ktesting.NewTestContext(t)
	start := time.Now()
	_, err := framework.NewCloud(ctx, target.Provider, env)
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "--cloud-init-timeout="+deadline.String()) {
		t.Fatalf("NewCloud = %v; want an error naming --cloud-init-timeout", err)
	}
	if elapsed > deadlineBound {
		t.Errorf("NewCloud took %s with a %s start-up deadline", elapsed, deadline)
	}
}

func testLookupTimeout(t *testing.T, target *Target, v variant) {
	id := target.Cloud.AddInstance("node-1")
	cloud, ctx := StartCloud(t, target, func(env *framework.Env) {
		env.InstanceCacheTTL = v.instanceCacheTTL
		env.InstanceLookupTimeout = deadline
		// The instance cache's list, detached from the lookups, ends at 2s.
		env.CloudAPI = cloudapi.Options{Timeout: 2 * time.Second, MaxRetries: -1}
	})
	inst, ok := cloud.InstancesV2()
	if !ok {
		t.Skip("provider has no instances")
	}
	t.Cleanup(target.Cloud.Fail(faultHung))
	calls := map[string]func(*corev1.Node) error{
		"InstanceExists":   func(n *corev1.Node) error { _, err := inst.InstanceExists(ctx, n); return err },
		"InstanceShutdown": func(n *corev1.Node) error { _, err := inst.InstanceShutdown(ctx, n); return err },
		"InstanceMetadata": func(n *corev1.Node) error { _, err := inst.InstanceMetadata(ctx, n); return err },
	}
	nodes := []*corev1.Node{Node("node-1", framework.Codec(target.Provider).Format(id)), Node("node-1", "")}
	for name, call := range calls {
		for _, n := range nodes {
			start := time.Now()
			err := call(n)
			elapsed := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "--instance-lookup-timeout="+deadline.String()) {
				t.Errorf("%s(providerID %q) = %v; want an error naming --instance-lookup-timeout", name, n.Spec.ProviderID, err)
			}
			if elapsed > deadlineBound {
				t.Errorf("%s(providerID %q) took %s with a %s deadline", name, n.Spec.ProviderID, elapsed, deadline)
			}
		}
	}
}
