package rancher

import (
	"context"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("rancher://<host uuid>"), as the existing CCM registered them.
const ProviderName = "rancher"

// Provider is the Rancher 1.x provider. The framework discovers what it can
// do from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg Config
	api *api
	lb  cloudprovider.LoadBalancer
}

var (
	_ framework.Provider     = (*Provider)(nil)
	_ framework.Configurable = (*Provider)(nil)
)

// New returns an unconfigured provider.
func New() *Provider { return &Provider{} }

// Name implements framework.Provider.
func (p *Provider) Name() string { return ProviderName }

// Config implements framework.Configurable.
func (p *Provider) Config() any { return &p.cfg }

// Init implements framework.Provider. (Stub: the provider helper writes it.)
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	p.api = &api{}
	lb, err := newLoadBalancer(ctx, env, p)
	if err != nil {
		return err
	}
	p.lb = lb
	return nil
}
