package framework

import (
	"context"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// Provider is a cloud. Name is the --cloud-provider value and, unless the
// provider implements ProviderIDCodec, the providerID scheme. Init builds the
// cloud API client from the (already loaded) config and should fail fast, with
// a message naming the setting, when configuration or credentials are wrong.
// Init runs once at start-up, before leader election: it must not start
// goroutines (use ControllersProvider for loops).
type Provider interface {
	Name() string
	Init(ctx context.Context, env *Env) error
}

// Configurable is implemented by providers with settings. Config returns a
// pointer to the provider's config struct; the framework fills it from the
// --cloud-config file and environment variables (see package config) before
// calling Init, and reports every bad field at once. It fills the struct
// from its zero value every time (defaults come from its tags), so a
// provider initialized again keeps nothing of its last settings.
type Configurable interface {
	Config() any
}

// ConfigFormatter is implemented by providers whose --cloud-config file is not
// YAML (OpenStack's INI, for example).
type ConfigFormatter interface {
	ConfigFormat() config.Format
}

// InstancesProvider is implemented by providers that know their cloud's
// instances. The framework builds cloudprovider.InstancesV2 on it.
type InstancesProvider interface {
	Instances() Instances
}

// ProviderIDCodec is implemented by providers whose providerID format is not
// the default "<name>://<id>", or that accept historic formats.
type ProviderIDCodec interface {
	ProviderIDCodec() providerid.Codec
}

// LoadBalancerProvider is implemented by providers that provision load
// balancers for Services of type LoadBalancer; most build the value with
// NewLoadBalancer.
type LoadBalancerProvider interface {
	LoadBalancer() cloudprovider.LoadBalancer
}

// RoutesProvider is implemented by providers that program pod-network routes
// (used with --configure-cloud-routes).
type RoutesProvider interface {
	Routes() cloudprovider.Routes
}

// ControllersProvider is implemented by providers with extra control loops.
type ControllersProvider interface {
	Controllers() []Controller
}

// Controller is an extra control loop. It is registered with the upstream
// command builder under Name, so --controllers can disable it and it runs
// only on the elected leader. The framework supervises it: when Run returns
// an error before ctx is done, it is called again after a backoff (1s
// doubling to 1m, reset after a run of 2m), and its /healthz check
// ("healthz/<Name>") fails from that error until Run is running again.
type Controller struct {
	Name string
	// Run blocks until ctx is done. It starts on the leader after Init, at
	// about the time the CCM starts its shared informers, possibly before:
	// a controller that asks env.Informers for an informer must call
	// env.Informers.Start(ctx.Done()), which starts only the informers not
	// yet running. Returning nil before ctx is done means the controller
	// has nothing to do (its configuration leaves it off) and is not
	// restarted; returning an error means it failed, and it is restarted.
	Run func(ctx context.Context, env *Env) error
}

// Env is what a provider receives from the framework: the CCM's own
// Kubernetes client, informers and event recorder (never build second ones),
// and an HTTP client already wired with the cloudapi transport.
type Env struct {
	Logger      klog.Logger
	Client      kubernetes.Interface
	Informers   informers.SharedInformerFactory
	Recorder    record.EventRecorder
	ClusterName string
	ClusterCIDR string

	// HTTPClient carries User-Agent, rate limit, retries, metrics and
	// redacted request logs. Pass it to the cloud SDK.
	HTTPClient *http.Client
	// APICounter counts the cloud API requests made through HTTPClient (and
	// any client made with NewHTTPClient), by operation.
	APICounter *cloudapi.Counter
	// CloudAPI holds the transport settings HTTPClient was built with.
	CloudAPI cloudapi.Options

	// CloudConfigFile is the --cloud-config path ("" when not set).
	CloudConfigFile string
	// LookupEnv reads configuration environment variables; nil means the
	// process environment. Tests set it to stay hermetic.
	LookupEnv func(string) (string, bool)
	// InstanceCacheTTL is how long one instance list serves lookups;
	// 0 means DefaultInstanceCacheTTL, negative disables the cache.
	InstanceCacheTTL time.Duration
	// NodeMonitorPeriod is the cloud node lifecycle controller's period
	// (--node-monitor-period): InstanceExists and InstanceShutdown, which
	// it calls for every NotReady Node each period, answer from an
	// instance list no older than this (one list a period, shared), so a
	// deleted VM's Node goes within about a period. 0 means the
	// InstanceCacheTTL.
	NodeMonitorPeriod time.Duration
	// InitTimeout bounds Provider.Init (--cloud-init-timeout); 0 means
	// DefaultInitTimeout, negative means no bound.
	InitTimeout time.Duration
	// InstanceLookupTimeout bounds each InstancesV2 call the node
	// controllers make (--instance-lookup-timeout): every request, retry
	// and wait in it together; 0 means DefaultInstanceLookupTimeout,
	// negative means no bound.
	InstanceLookupTimeout time.Duration
	// LoadBalancerCacheTTL is how long one list of the cloud's load
	// balancers serves the pipeline's lookups (for drivers that implement
	// LoadBalancerLister); 0 means DefaultLoadBalancerCacheTTL, negative
	// disables the cache.
	LoadBalancerCacheTTL time.Duration
	// LoadBalancerFollow: a load-balancer sync whose load balancer the
	// cloud is still provisioning or changing succeeds at once, and the
	// pipeline follows the load balancer and has the Service synced again
	// when it is ready (see ProgressAnnotation), instead of handing the
	// Service back as a retry, which the service controller reports as a
	// Warning Event. Main turns it on; it needs Client.
	LoadBalancerFollow bool
	// LoadBalancerWait is how long EnsureLoadBalancerDeleted waits for the
	// cloud to finish deleting a load balancer before it hands the Service
	// back as a retry; 0 or negative: no wait.
	LoadBalancerWait time.Duration
	// Version is the ccmkit version (from ldflags).
	Version string
	// NoNodeDeletionGuard turns the node-deletion guard off
	// (--node-deletion-guard=false): a VM the cloud says is gone is
	// reported gone even when the cloud sees none of the cluster's VMs.
	NoNodeDeletionGuard bool
	// LeaderElectionLease is the CCM's leader-election Lease, which the
	// node-deletion guard's own Events name; the zero value means
	// kube-system/cloud-controller-manager.
	LeaderElectionLease types.NamespacedName
}

// NewHTTPClient returns a client for a provider whose transport defaults
// differ from the framework's, e.g. its own rate limit. Settings the
// operator gave (the --cloud-api-* flags, in e.CloudAPI) win over the
// provider's defaults in o. The client shares the Env's request counter.
func (e *Env) NewHTTPClient(o cloudapi.Options) *http.Client {
	merged := o
	merged.Provider, merged.Version, merged.Counter = e.CloudAPI.Provider, e.CloudAPI.Version, e.CloudAPI.Counter
	if e.CloudAPI.QPS != 0 {
		merged.QPS = e.CloudAPI.QPS
	}
	if e.CloudAPI.Burst != 0 {
		merged.Burst = e.CloudAPI.Burst
	}
	if e.CloudAPI.MaxRetries != 0 {
		merged.MaxRetries = e.CloudAPI.MaxRetries
	}
	if e.CloudAPI.MinBackoff != 0 {
		merged.MinBackoff = e.CloudAPI.MinBackoff
	}
	if e.CloudAPI.MaxBackoff != 0 {
		merged.MaxBackoff = e.CloudAPI.MaxBackoff
	}
	if e.CloudAPI.Timeout != 0 {
		merged.Timeout = e.CloudAPI.Timeout
	}
	if e.CloudAPI.Budget != 0 {
		merged.Budget = e.CloudAPI.Budget
	}
	if e.CloudAPI.Base != nil {
		merged.Base = e.CloudAPI.Base
	}
	merged.Sensitive = append(append([]string(nil), e.CloudAPI.Sensitive...), o.Sensitive...)
	return cloudapi.NewClient(merged)
}

// SecretMaker is the capability behind the "make-secret" subcommand
// (docs/make-secret.md): a provider that implements it gets
// "<name>-cloud-controller-manager make-secret", which loads the provider's
// config as the CCM does (environment, *_FILE variables, --cloud-config),
// checks it against the cloud unless --offline, and prints the Kubernetes
// Secret its shipped manifests read.
//
// The Secret's data are, declaratively, the config fields tagged
// `secret:"<key>"` (see config.SecretData) that are set, plus, when
// CredentialSecret().ConfigFileKey is not empty, the whole --cloud-config
// file under that key. Two optional capabilities refine it:
// SecretCompleter changes or completes the data, CredentialChecker replaces
// Init as the online check.
type SecretMaker interface {
	CredentialSecret() CredentialSecret
}

// CredentialSecret names the Secret a provider's shipped manifests
// (examples/manifests/<cloud>/secret.example.yaml) read its credentials from.
type CredentialSecret struct {
	// Namespace of the Secret; "" means kube-system.
	Namespace string
	// Name of the Secret, such as "digitalocean".
	Name string
	// ConfigFileKey, for a cloud configured by its --cloud-config file
	// (OpenStack's cloud.conf), is the key that holds the whole file, byte
	// for byte as the provider read it. "" puts no file in the Secret.
	ConfigFileKey string
}

// SecretCompleter is implemented by SecretMaker providers whose Secret
// holds more, or another form, than their tagged config fields: make-secret
// calls CompleteSecret after loading the config (the provider's Config()
// value is filled) with the data gathered from the tags, and prints what it
// leaves in data. Triton, for example, adds the key's fingerprint and stores
// the key in the form its CCM reads. An error ends make-secret; it must not
// quote a secret.
type SecretCompleter interface {
	CompleteSecret(ctx context.Context, data map[string][]byte) error
}

// CredentialChecker is implemented by SecretMaker providers whose Init needs
// more than the credentials (such as a metadata service only reachable from
// the cloud's own machines). make-secret calls CheckCredentials, unless
// --offline, with an Env that has the loaded config's HTTP client and no
// Kubernetes client, instead of Init. It returns an error saying what the
// cloud refused, without quoting a secret. Without it, make-secret calls
// Init with that Env.
type CredentialChecker interface {
	CheckCredentials(ctx context.Context, env *Env) error
}
