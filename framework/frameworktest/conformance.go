package frameworktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// RunConformance runs the behavioural contract against the provider h sets
// up. Call it from the provider's own tests:
//
//	func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness{}) }
//
// The instance subtests run twice: with the framework's instance cache off
// (every lookup goes to the provider) and on (refreshed for every lookup,
// so that every answer comes through the shared list); the load-balancer
// subtests run with the shared load-balancer list on and off.
func RunConformance(t *testing.T, h Harness) {
	t.Run("ProviderIDRoundTrip", func(t *testing.T) { testProviderIDRoundTrip(t, newSuite(t, h, variant{})) })
	for _, v := range []variant{{name: "InstanceCacheOff"}, {name: "InstanceCacheOn", instanceCacheTTL: time.Nanosecond}} {
		t.Run(v.name, func(t *testing.T) {
			t.Run("InstanceMetadata", func(t *testing.T) { testInstanceMetadata(t, newSuite(t, h, v)) })
			t.Run("InstanceExistsOnlyFalseWhenNotFound", func(t *testing.T) { testInstanceExists(t, newSuite(t, h, v)) })
			t.Run("InstanceShutdown", func(t *testing.T) { testInstanceShutdown(t, newSuite(t, h, v)) })
			t.Run("SharedNameIsAnError", func(t *testing.T) { testSharedName(t, newSuite(t, h, v)) })
		})
	}
	t.Run("ListInstances", func(t *testing.T) { testListInstances(t, newSuite(t, h, variant{})) })
	t.Run("NodeDeletionGuard", func(t *testing.T) { testNodeDeletionGuard(t, h) })
	for _, v := range []variant{{name: "LoadBalancerListOn", lbCacheTTL: framework.DefaultLoadBalancerCacheTTL}, {name: "LoadBalancerListOff", lbCacheTTL: -1}} {
		t.Run(v.name, func(t *testing.T) {
			if newSuite(t, h, v).cloud.lb == nil {
				t.Skip("provider has no load balancers")
			}
			t.Run("EnsureIsIdempotent", func(t *testing.T) { testEnsureIdempotent(t, newSuite(t, h, v)) })
			t.Run("NodeChurnChangesOnlyMembers", func(t *testing.T) { testNodeChurn(t, newSuite(t, h, v)) })
			t.Run("InvalidAnnotationNoWrites", func(t *testing.T) { testInvalidAnnotation(t, newSuite(t, h, v)) })
			t.Run("DeleteIsIdempotent", func(t *testing.T) { testDeleteIdempotent(t, newSuite(t, h, v)) })
			t.Run("CrashBeforeIDAnnotation", func(t *testing.T) { testCrashBeforeIDAnnotation(t, h, v) })
			t.Run("CopiedIDAnnotationTakesNothingOver", func(t *testing.T) { testCopiedIDAnnotation(t, newSuite(t, h, v)) })
		})
	}
	t.Run("Routes", func(t *testing.T) {
		s := newSuite(t, h, variant{})
		if s.cloud.routes == nil {
			t.Skip("provider has no routes")
		}
		testRoutes(t, s)
	})
}

// variant is how the suite sets the framework's caches for one run.
type variant struct {
	name string
	// instanceCacheTTL: 0 is off.
	instanceCacheTTL time.Duration
	// lbCacheTTL is Env.LoadBalancerCacheTTL.
	lbCacheTTL time.Duration
	// guard turns the node-deletion guard on.
	guard bool
}

// suite is one provider initialized against one fresh simulated cloud.
type suite struct {
	target   *Target
	variant  variant
	cloud    cloudParts
	kube     *fake.Clientset
	recorder *record.FakeRecorder
	ctx      context.Context
}

type cloudParts struct {
	*framework.Cloud
	lb     cloudprovider.LoadBalancer
	routes cloudprovider.Routes
}

const clusterName = "conformance"

func newSuite(t *testing.T, h Harness, v variant) *suite {
	t.Helper()
	return newSuiteFor(t, h.Setup(t), v)
}

// newSuiteFor initializes target's provider against its cloud.
func newSuiteFor(t *testing.T, target *Target, v variant) *suite {
	t.Helper()
	if target.MaxProvisioningPolls == 0 {
		target.MaxProvisioningPolls = 20
	}
	_, ctx := ktesting.NewTestContext(t)
	s := &suite{target: target, variant: v, kube: fake.NewClientset(), recorder: record.NewFakeRecorder(1000), ctx: ctx}
	s.start(t)
	return s
}

// start initializes the provider, as a starting CCM does; a second call is
// a restarted CCM (same cluster, same cloud, nothing remembered).
func (s *suite) start(t *testing.T) {
	t.Helper()
	cloud, err := framework.NewCloud(s.ctx, s.target.Provider, newEnv(t, s.target, s.kube, s.recorder, s.variant))
	if err != nil {
		t.Fatalf("framework.NewCloud: %v", err)
	}
	s.cloud = cloudParts{Cloud: cloud}
	if lb, ok := cloud.LoadBalancer(); ok {
		s.cloud.lb = lb
	}
	if r, ok := cloud.Routes(); ok {
		s.cloud.routes = r
	}
}

// newEnv is what framework.Main hands target's provider: its settings and
// cloud config, kube, and recorder.
func newEnv(t *testing.T, target *Target, kube *fake.Clientset, recorder record.EventRecorder, v variant) *framework.Env {
	t.Helper()
	instanceTTL := v.instanceCacheTTL
	if instanceTTL == 0 {
		instanceTTL = -1
	}
	env := &framework.Env{
		Client:      kube,
		Recorder:    recorder,
		ClusterName: clusterName,
		ClusterCIDR: "10.244.0.0/16",
		LookupEnv: func(k string) (string, bool) {
			v, ok := target.Env[k]
			return v, ok
		},
		// One attempt, a short timeout: fault tests must see the raw answer.
		CloudAPI:             cloudapi.Options{MaxRetries: -1, Timeout: time.Second},
		InstanceCacheTTL:     instanceTTL,
		LoadBalancerCacheTTL: v.lbCacheTTL,
		// The cases check the provider's answers, one Node at a time; the
		// framework's node-deletion guard, which would hide a provider's
		// false not-found behind its own check, has a case of its own
		// (NodeDeletionGuard).
		NoNodeDeletionGuard: !v.guard,
	}
	if target.CloudConfig != "" {
		env.CloudConfigFile = filepath.Join(t.TempDir(), "cloud.conf")
		if err := os.WriteFile(env.CloudConfigFile, []byte(target.CloudConfig), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func (s *suite) instances(t *testing.T) cloudprovider.InstancesV2 {
	t.Helper()
	inst, ok := s.cloud.InstancesV2()
	if !ok {
		t.Skip("provider has no instances")
	}
	return inst
}

func (s *suite) providerID(id string) string { return framework.Codec(s.target.Provider).Format(id) }

func (s *suite) node(name, id string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
	if id != "" {
		n.Spec.ProviderID = s.providerID(id)
	}
	return n
}

// addNodes creates n instances and their Nodes (with providerIDs).
func (s *suite) addNodes(prefix string, n int) []*corev1.Node {
	var nodes []*corev1.Node
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		nodes = append(nodes, s.node(name, s.target.Cloud.AddInstance(name)))
	}
	return nodes
}

// writesDuring returns how many cloud writes f made.
func (s *suite) writesDuring(f func()) int { return writesDuring(s.target.Cloud, f) }

// events drains the recorded events.
func (s *suite) events() []string { return drain(s.recorder) }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
