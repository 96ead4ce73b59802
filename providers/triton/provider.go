package triton

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/joyent/triton-go/compute"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("triton://<machine uuid>").
const ProviderName = cloud.Name

// Provider is the Triton provider. The framework discovers what it can do
// from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	api       *api
	instances *instances
	// machines is the shared list of the cluster's machines (lb_machines.go),
	// which the load balancers, the drain and the firewall controllers read.
	machines *clusterMachines
	// lb is nil with TRITON_LB_MODE none: the provider has no load
	// balancers (lb_disabled.go).
	lb cloudprovider.LoadBalancer
}

var (
	_ framework.Provider          = (*Provider)(nil)
	_ framework.Configurable      = (*Provider)(nil)
	_ framework.InstancesProvider = (*Provider)(nil)
)

// New returns an unconfigured provider; framework.Main or
// framework.NewCloud loads its Config and calls Init.
func New() *Provider { return &Provider{} }

// Name implements framework.Provider.
func (p *Provider) Name() string { return ProviderName }

// Config implements framework.Configurable: the framework fills the struct
// before Init.
func (p *Provider) Config() any { return &p.cfg }

// Init builds the CloudAPI clients and fails fast, before the CCM starts
// its controllers, when the key cannot be read or does not match
// TRITON_KEY_ID, CloudAPI is unreachable or refuses the key, or the load
// balancers' mode cannot work on the account (an account without CNS
// runs with TRITON_LB_MODE none only); every error names the variable to
// check and none contains the key.
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	a, err := connect(ctx, &p.cfg, p.httpClient(env))
	if err != nil {
		return err
	}
	p.api = a
	p.instances = newInstances(a, &p.cfg, env.InstanceCacheTTL)
	p.machines = newClusterMachines(env.ClusterName, func(ctx context.Context) ([]*compute.Instance, error) {
		return a.listMachines(ctx, clusterTag, env.ClusterName)
	}, machineListTTL(env.LoadBalancerCacheTTL))
	lb, err := newLoadBalancer(ctx, env, p)
	if err != nil {
		return err
	}
	p.lb = lb
	klog.FromContext(ctx).Info("Triton provider initialized",
		"url", cloudapi.RedactURL(a.URL()), "account", a.Login, "user", p.cfg.User,
		"datacenter", a.Datacenter, "region", p.cfg.regionOf(a.Datacenter), "cnsEnabled", a.CNSEnabled)
	return nil
}

// httpClient is the framework's cloudapi client; the --cloud-api-* flags
// set its rate limit and retries. TRITON_SKIP_TLS_VERIFY turns off
// certificate checks (a test install's self-signed certificate).
func (p *Provider) httpClient(env *framework.Env) *http.Client {
	o := cloudapi.Options{}
	if p.cfg.SkipTLSVerify {
		o.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator asked, with TRITON_SKIP_TLS_VERIFY
	}
	return env.NewHTTPClient(o)
}

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }
