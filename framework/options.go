package framework

import (
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cloud-provider/options"
	cliflag "k8s.io/component-base/cli/flag"
)

// Defaults ccmkit applies on top of the upstream ones, tuned for clusters of
// thousands of nodes. Upstream initializes one node at a time with 20 kube
// API requests/s, about 2.5 minutes for 1,000 nodes; the instance cache makes
// node initialization cheap for the cloud, so more workers are safe. Node
// initialization then costs about three kube API writes per node, so the
// kube API rate bounds it: 100/s initializes 1,000 nodes in about 30 s
// (API Priority and Fairness still protects the API server).
const (
	DefaultConcurrentNodeSyncs    = 10
	DefaultConcurrentServiceSyncs = 5
	DefaultKubeAPIQPS             = 100
	DefaultKubeAPIBurst           = 200
)

// Option customizes the command Main and NewCommand build.
type Option func(*settings)

type settings struct {
	version     string
	name        string
	longDesc    string
	controllers []Controller
	flags       cliflag.NamedFlagSets
	tune        []func(*options.CloudControllerManagerOptions)
	stopCh      <-chan struct{}

	cloudAPIQPS        float64
	cloudAPIBurst      int
	cloudAPIMaxRetries int
	cloudAPITimeout    time.Duration
	instanceCacheTTL   time.Duration
	lbCacheTTL         time.Duration
	lbWait             time.Duration
	initTimeout        time.Duration
	lookupTimeout      time.Duration
	deletionGuard      bool
}

// WithVersion sets the version --version prints, overriding the ldflags one.
func WithVersion(v string) Option { return func(s *settings) { s.version = v } }

// WithCommandName names the command (usage, --version); the default is
// "<provider>-cloud-controller-manager".
func WithCommandName(name string) Option { return func(s *settings) { s.name = name } }

// WithDescription sets the long description --help prints.
func WithDescription(long string) Option { return func(s *settings) { s.longDesc = long } }

// WithControllers adds extra control loops, as ControllersProvider does.
func WithControllers(cs ...Controller) Option {
	return func(s *settings) { s.controllers = append(s.controllers, cs...) }
}

// WithFlags adds a named section of flags to the command (and to --help).
func WithFlags(section string, fs *pflag.FlagSet) Option {
	return func(s *settings) { s.flags.FlagSet(section).AddFlagSet(fs) }
}

// WithOptions changes the upstream options before flags are parsed, e.g. to
// set other defaults.
func WithOptions(f func(*options.CloudControllerManagerOptions)) Option {
	return func(s *settings) { s.tune = append(s.tune, f) }
}

// WithStopChannel stops the controllers when ch closes (tests).
func WithStopChannel(ch <-chan struct{}) Option { return func(s *settings) { s.stopCh = ch } }

func newSettings(opts []Option) *settings {
	s := &settings{version: Version(), instanceCacheTTL: DefaultInstanceCacheTTL, lbCacheTTL: DefaultLoadBalancerCacheTTL,
		lbWait: DefaultLoadBalancerWait, initTimeout: DefaultInitTimeout, lookupTimeout: DefaultInstanceLookupTimeout, deletionGuard: true}
	for _, o := range opts {
		o(s)
	}
	fs := s.flags.FlagSet("cloud API")
	fs.Float64Var(&s.cloudAPIQPS, "cloud-api-qps", s.cloudAPIQPS, "Requests per second to the cloud API (token bucket); 0 means the provider's default, unlimited if it has none.")
	fs.IntVar(&s.cloudAPIBurst, "cloud-api-burst", s.cloudAPIBurst, "Burst of requests to the cloud API above --cloud-api-qps.")
	fs.IntVar(&s.cloudAPIMaxRetries, "cloud-api-max-retries", s.cloudAPIMaxRetries, "Retries of a cloud API request that failed with 429 or 5xx; 0 means the default (5), -1 disables retries.")
	fs.DurationVar(&s.cloudAPITimeout, "cloud-api-timeout", s.cloudAPITimeout, "Timeout of one attempt of a cloud API request, reading its answer included; 0 means the provider's default (30s unless it sets one). A request's attempts and the waits between them together take at most twice this.")
	fs.DurationVar(&s.initTimeout, "cloud-init-timeout", s.initTimeout, "Deadline for initializing the cloud provider at start-up (checking its credentials and API); when it passes the CCM exits with an error. Negative means none.")
	fs.DurationVar(&s.lookupTimeout, "instance-lookup-timeout", s.lookupTimeout, "Deadline for one instance lookup of the node controllers (exists, shut down, metadata), every cloud API request and retry in it together; on expiry the lookup fails and the Node is kept. Negative means none.")
	fs.BoolVar(&s.deletionGuard, "node-deletion-guard", s.deletionGuard, "Report a Node's VM gone (so that the node lifecycle controller deletes the Node) only while the cloud finds the VM of at least one other initialized Node: a credential of another account, which finds none, then deletes no Nodes. Turn it off only to delete the last Nodes of a cluster whose VMs are all gone.")
	fs.DurationVar(&s.instanceCacheTTL, "instance-cache-ttl", s.instanceCacheTTL, "How long one list of the cloud's instances serves node lookups; negative disables the cache. Whether the VM of a NotReady Node still exists (or is shut down) is answered from a list no older than --node-monitor-period, one list a period shared by every NotReady Node.")
	fs.DurationVar(&s.lbCacheTTL, "load-balancer-cache-ttl", s.lbCacheTTL, "How long one list of the cloud's load balancers serves load-balancer lookups (for providers that list them); the CCM's own changes are seen at once, changes made elsewhere within this time. Negative disables the cache.")
	fs.DurationVar(&s.lbWait, "load-balancer-wait", s.lbWait, "How long the deletion of a Service's load balancer waits for the cloud to finish it before the Service is handed back for a retry; 0 hands it back at once.")
	return s
}

// defaultOptions returns the upstream options with ccmkit's defaults.
func (s *settings) defaultOptions(cloudProvider string) (*options.CloudControllerManagerOptions, error) {
	o, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		return nil, err
	}
	o.KubeCloudShared.CloudProvider.Name = cloudProvider
	o.NodeController.ConcurrentNodeSyncs = DefaultConcurrentNodeSyncs
	o.ServiceController.ConcurrentServiceSyncs = DefaultConcurrentServiceSyncs
	o.Generic.ClientConnection.QPS = DefaultKubeAPIQPS
	o.Generic.ClientConnection.Burst = DefaultKubeAPIBurst
	for _, f := range s.tune {
		f(o)
	}
	return o, nil
}
