package frameworktest

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// LBFixture is a provider's load balancers on its simulated cloud, driven
// as the service controller drives them: the provider started by
// framework.NewCloud, a fake API server holding the Services (the pipeline
// writes the ID annotation there), an event recorder, and the Nodes every
// sync targets. A provider's tests keep their simulator beside it for the
// cloud's own assertions:
//
//	type lbFixture struct {
//		*frameworktest.LBFixture
//		sim *dosim.Server
//	}
//
//	func newLBFixture(t *testing.T, opts frameworktest.LBOptions) *lbFixture {
//		sim := dosim.NewServer(t, dosim.Options{})
//		opts.Nodes = []string{"node-b", "node-a"}
//		return &lbFixture{frameworktest.NewLBFixture(t, target(sim), opts), sim}
//	}
type LBFixture struct {
	Ctx    context.Context
	Kube   *fake.Clientset
	Events *record.FakeRecorder
	// Cloud is the started provider (Cloud.Env() what it was started
	// with), LB its load balancers.
	Cloud *framework.Cloud
	LB    cloudprovider.LoadBalancer
	// Nodes are what every Ensure and Update passes; a test may change
	// them, as nodes join and leave.
	Nodes       []*corev1.Node
	ClusterName string

	target *Target
	opts   LBOptions
}

// LBOptions tune NewLBFixture. The zero value is the target's settings,
// the framework's default load-balancer list, no Nodes, and Services with
// one TCP port.
type LBOptions struct {
	// Env is added to the target's settings; a value here wins.
	Env map[string]string
	// CacheTTL is framework.Env.LoadBalancerCacheTTL: 0 is the framework's
	// default; -1 reads the cloud at every sync, for tests of changes made
	// behind the CCM's back.
	CacheTTL time.Duration
	// ClusterName is the cluster's name; "" is "test-cluster".
	ClusterName string
	// Nodes are instances NewLBFixture adds to the cloud, in this order,
	// each with its Node in LBFixture.Nodes.
	Nodes []string
	// Ports are every Service's ports; nil is one, "http" TCP 80 ->
	// 30080.
	Ports []corev1.ServicePort
	// UID makes a Service's UID of its name; nil is "uid-<name>".
	UID func(name string) types.UID
	// NoAdvance: EnsureReady and DeleteDone sync again without calling
	// the cloud's Advance; the cloud settles on reads alone.
	NoAdvance bool
	// MaxSyncs bounds EnsureReady and DeleteDone; 0 is 30.
	MaxSyncs int
	// NewProvider makes the provider of each CCM Start starts.
	NewProvider func() framework.Provider
	// Tune changes the Env of every CCM the fixture starts.
	Tune func(*framework.Env)
}

// NewLBFixture starts target's provider with a fake API server and an
// event recorder, and adds opts.Nodes to target's cloud.
func NewLBFixture(t *testing.T, target *Target, opts LBOptions) *LBFixture {
	t.Helper()
	if opts.ClusterName == "" {
		opts.ClusterName = "test-cluster"
	}
	if opts.MaxSyncs == 0 {
		opts.MaxSyncs = 30
	}
	_, ctx := ktesting.NewTestContext(t)
	f := &LBFixture{
		Ctx:         ctx,
		Kube:        NewClientset(),
		Events:      record.NewFakeRecorder(100),
		ClusterName: opts.ClusterName,
		target:      target,
		opts:        opts,
	}
	f.Cloud = f.start(t, target.Provider)
	f.LB = loadBalancers(t, f.Cloud)
	f.AddNodes(opts.Nodes...)
	return f
}

// Start starts another CCM on the same cloud and API server (a new leader,
// which knows nothing of the first's syncs): a provider from
// LBOptions.NewProvider, with the fixture's settings and tune's changes to
// its Env (a nil Client: a CCM that cannot write the ID annotation). It
// returns its load balancers; f.LB stays as it is.
func (f *LBFixture) Start(t *testing.T, tune ...func(*framework.Env)) cloudprovider.LoadBalancer {
	t.Helper()
	if f.opts.NewProvider == nil {
		t.Fatal("LBOptions.NewProvider is nil: Start needs a new provider for each CCM")
	}
	cloud := f.start(t, f.opts.NewProvider(), tune...)
	return loadBalancers(t, cloud)
}

// start runs framework.NewCloud for p as framework.Main would, with the
// fixture's settings.
func (f *LBFixture) start(t *testing.T, p framework.Provider, tune ...func(*framework.Env)) *framework.Cloud {
	t.Helper()
	vars := maps.Clone(f.target.Env)
	if vars == nil {
		vars = map[string]string{}
	}
	maps.Copy(vars, f.opts.Env)
	env := &framework.Env{
		Client:      f.Kube,
		Recorder:    f.Events,
		ClusterName: f.ClusterName,
		LookupEnv:   func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		// One attempt each, so that a fault is seen as it is.
		CloudAPI:             cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
		LoadBalancerCacheTTL: f.opts.CacheTTL,
	}
	if f.target.CloudConfig != "" {
		env.CloudConfigFile = filepath.Join(t.TempDir(), "cloud.conf")
		if err := os.WriteFile(env.CloudConfigFile, []byte(f.target.CloudConfig), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if f.opts.Tune != nil {
		f.opts.Tune(env)
	}
	for _, fn := range tune {
		fn(env)
	}
	cloud, err := framework.NewCloud(f.Ctx, p, env)
	if err != nil {
		t.Fatalf("framework.NewCloud: %v", err)
	}
	return cloud
}

func loadBalancers(t *testing.T, cloud *framework.Cloud) cloudprovider.LoadBalancer {
	t.Helper()
	lb, ok := cloud.LoadBalancer()
	if !ok {
		t.Fatalf("provider %s has no load balancers", cloud.ProviderName())
	}
	return lb
}

// AddNodes adds an instance to the cloud for each name, and its Node (the
// providerID the provider formats) to f.Nodes; it returns the new Nodes.
func (f *LBFixture) AddNodes(names ...string) []*corev1.Node {
	codec := framework.Codec(f.target.Provider)
	var added []*corev1.Node
	for _, name := range names {
		added = append(added, Node(name, codec.Format(f.target.Cloud.AddInstance(name))))
	}
	f.Nodes = append(f.Nodes, added...)
	return added
}

// Node is a Node called name with providerID ("" for one the CCM has not
// initialized yet).
func Node(name, providerID string) *corev1.Node {
	n := &corev1.Node{}
	n.Name, n.Spec.ProviderID = name, providerID
	return n
}

// Drain returns the Events recorded since the last Drain.
func (f *LBFixture) Drain() []string { return drain(f.Events) }

// WritesDuring returns how many writes the cloud served while fn ran.
func (f *LBFixture) WritesDuring(fn func()) int { return writesDuring(f.target.Cloud, fn) }

// OnlyLoadBalancer returns the cloud's one load balancer, in the neutral
// form; it fails t unless the cloud holds exactly one.
func (f *LBFixture) OnlyLoadBalancer(t *testing.T) LoadBalancer {
	t.Helper()
	return onlyLoadBalancer(t, f.target.Cloud)
}
