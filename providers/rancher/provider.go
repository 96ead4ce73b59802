package rancher

import (
	"context"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("rancher://<host uuid>"), as the existing CCM registered them. It MUST
// NOT change: the providerID is immutable and every existing Node carries
// it.
const ProviderName = cloud.ProviderName

// Provider is the Rancher 1.x provider. The framework discovers what it can
// do from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	api       *cloud.API
	instances *instances
	lb        cloudprovider.LoadBalancer
	// agents is the hosts' agent IPs the load balancers read, kept from
	// every host list (lb_agents.go).
	agents *agentIPs
	// beforeSharedLock is sharedBackend.beforeLock (tests set it).
	beforeSharedLock func()
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

// Init builds the go-rancher client and fails fast, before the CCM starts
// its controllers, when the Cattle API is unreachable, is not an
// environment's API or refuses the key; every error names the variable to
// check and none contains a secret. Then the load-balancer half starts,
// and may fail start-up too.
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	a, err := connect(ctx, &p.cfg, env)
	if err != nil {
		return err
	}
	p.api = a
	p.agents = newAgentIPs(a, hostTTL(env))
	p.instances = newInstances(a, &p.cfg, env, p.agents)
	lb, err := newLoadBalancer(ctx, env, p)
	if err != nil {
		return err
	}
	p.lb = lb
	klog.FromContext(ctx).Info("Rancher provider initialized", "cattleURL", a.URL)
	return nil
}

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }
