package framework

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/klog/v2"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// Cloud is the cloudprovider.Interface the framework builds from a Provider.
type Cloud struct {
	provider  Provider
	env       *Env
	instances cloudprovider.InstancesV2
	lb        cloudprovider.LoadBalancer
	routes    cloudprovider.Routes
}

var _ cloudprovider.Interface = (*Cloud)(nil)

// NewCloud loads p's config (if Configurable), calls p.Init with env and
// returns the cloudprovider.Interface for it. Missing Env pieces get
// defaults: an HTTP client from env.CloudAPI, a request counter, a logger.
// Main calls it at start-up; tests and the conformance suite call it
// directly.
//
// It also sets a transform on env.Informers' Node informer (and Service
// informer, when p has load balancers) that drops managedFields and Node
// status images from the cached objects (see trimCachedObject): readers of
// those informers, providers' controllers included, never see these
// fields.
func NewCloud(ctx context.Context, p Provider, env *Env) (*Cloud, error) {
	if env.Logger.GetSink() == nil {
		env.Logger = klog.FromContext(ctx)
	}
	completeEnv(p, env)
	ctx = klog.NewContext(ctx, env.Logger)
	if err := loadConfig(p, env); err != nil {
		return nil, err
	}
	if err := initWithDeadline(ctx, p, env); err != nil {
		return nil, fmt.Errorf("initializing %s cloud provider: %w", p.Name(), err)
	}
	// A capability the provider returns as nil, a typed nil pointer
	// included, is absent: the upstream controllers then do not run it.
	cloud := &Cloud{provider: p, env: env}
	if ip, ok := p.(InstancesProvider); ok {
		if inst := ip.Instances(); !isNil(inst) {
			cloud.instances = newInstancesV2(p.Name(), Codec(p), inst, env)
		}
	}
	if lp, ok := p.(LoadBalancerProvider); ok {
		if lb := lp.LoadBalancer(); !isNil(lb) {
			cloud.lb = lb
		}
	}
	if rp, ok := p.(RoutesProvider); ok {
		if routes := rp.Routes(); !isNil(routes) {
			cloud.routes = routes
		}
	}
	// Before the CCM starts the informers: the cloud controllers never read
	// the fields dropped here, and leaving them out of the caches saves
	// memory in proportion to the cluster's size.
	trimInformers(env.Logger, env.Informers, cloud.lb != nil)
	return cloud, nil
}

// isNil reports whether v is nil or an interface holding a nil pointer
// (or another nil reference).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Codec returns p's providerID codec: its own, or "<name>://<id>".
func Codec(p Provider) providerid.Codec {
	if c, ok := p.(ProviderIDCodec); ok {
		return c.ProviderIDCodec()
	}
	return providerid.Codec{Scheme: p.Name()}
}

func completeEnv(p Provider, env *Env) {
	env.Logger = env.Logger.WithValues("provider", p.Name())
	if env.Version == "" {
		env.Version = Version()
	}
	if env.APICounter == nil {
		env.APICounter = cloudapi.NewCounter()
	}
	if env.CloudAPI.Provider == "" {
		env.CloudAPI.Provider = p.Name()
	}
	if env.CloudAPI.Version == "" {
		env.CloudAPI.Version = env.Version
	}
	if env.CloudAPI.Counter == nil {
		env.CloudAPI.Counter = env.APICounter
	}
	if env.HTTPClient == nil {
		env.HTTPClient = cloudapi.NewClient(env.CloudAPI)
	}
}

// Provider returns the provider the cloud was built from.
func (c *Cloud) Provider() Provider { return c.provider }

// Env returns the environment the provider was initialized with.
func (c *Cloud) Env() *Env { return c.env }

// Initialize is a no-op: the provider was initialized (and its config
// checked) at start-up, before leader election, so bad credentials fail fast.
func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

// LoadBalancer returns the provider's load balancer implementation.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return c.lb, c.lb != nil }

// Instances is not supported: the framework implements InstancesV2.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 returns the framework's implementation over the provider's
// Instances.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) {
	return c.instances, c.instances != nil
}

// Zones is not supported: zones come from InstancesV2 metadata.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not supported.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// Routes returns the provider's routes implementation.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return c.routes, c.routes != nil }

// ProviderName returns the provider's name.
func (c *Cloud) ProviderName() string { return c.provider.Name() }

// HasClusterID is true: every CCM built with ccmkit knows its cluster name.
func (c *Cloud) HasClusterID() bool { return true }

// loadConfig fills a Configurable provider's config from the
// --cloud-config file and the environment (see package config); every bad
// setting is in the error, named by its variable or key.
func loadConfig(p Provider, env *Env) error {
	c, ok := p.(Configurable)
	if !ok {
		return nil
	}
	src := config.Source{File: env.CloudConfigFile, LookupEnv: env.LookupEnv}
	if f, ok := p.(ConfigFormatter); ok {
		src.Format = f.ConfigFormat()
	}
	// From the zero value: a provider initialized again (a restarted
	// CCM, another credential) keeps nothing of its last settings.
	cfg := reflect.ValueOf(c.Config())
	if cfg.Kind() == reflect.Pointer && !cfg.IsNil() {
		cfg.Elem().SetZero()
	}
	if err := config.Load(c.Config(), src); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	return nil
}
