package skeleton

import (
	"context"
	"fmt"
	"net/http"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("skeleton://i-000001"). It MUST NOT change once Nodes carry it: the
// providerID is immutable and every existing Node would stop matching.
const ProviderName = "skeleton"

// Provider is the Skeleton Cloud provider. The framework discovers what it
// can do from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	instances *instances
	lb        cloudprovider.LoadBalancer
	routes    *routes
}

var (
	_ framework.Provider             = (*Provider)(nil)
	_ framework.Configurable         = (*Provider)(nil)
	_ framework.InstancesProvider    = (*Provider)(nil)
	_ framework.LoadBalancerProvider = (*Provider)(nil)
	_ framework.RoutesProvider       = (*Provider)(nil)
)

// New returns an unconfigured provider; framework.Main or
// framework.NewCloud loads its Config and calls Init.
func New() *Provider { return &Provider{} }

// Name implements framework.Provider.
func (p *Provider) Name() string { return ProviderName }

// Config implements framework.Configurable: the framework fills the struct
// before Init.
func (p *Provider) Config() any { return &p.cfg }

// Init builds the API client and fails fast when the API is unreachable or
// the token is wrong, before the CCM starts its controllers.
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	c, err := newClient(p.cfg.APIURL, p.httpClient(env), p.cfg.Token)
	if err != nil {
		return err
	}
	if err := c.checkAccess(ctx); err != nil {
		if isStatus(err, http.StatusUnauthorized) || isStatus(err, http.StatusForbidden) {
			return fmt.Errorf("the Skeleton API rejected the token (check SKELETON_TOKEN or SKELETON_TOKEN_FILE): %w", err)
		}
		return fmt.Errorf("cannot use the Skeleton API at SKELETON_API_URL: %w", err)
	}
	p.instances = &instances{client: c, defaultRegion: p.cfg.Region}
	p.lb = newLoadBalancer(env, c, framework.Codec(p))
	p.routes = &routes{client: c, instances: p.instances}
	klog.FromContext(ctx).Info("Skeleton Cloud provider initialized", "apiURL", cloudapi.RedactURL(c.base), "region", p.cfg.Region)
	return nil
}

// httpClient is the framework's cloudapi client with the provider's rate
// limit as the default; --cloud-api-qps overrides it.
func (p *Provider) httpClient(env *framework.Env) *http.Client {
	return env.NewHTTPClient(cloudapi.Options{QPS: p.cfg.APIQPS})
}

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// Routes implements framework.RoutesProvider.
func (p *Provider) Routes() cloudprovider.Routes { return p.routes }
