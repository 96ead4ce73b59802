package digitalocean

import (
	"context"
	"fmt"
	"net/http"

	"github.com/digitalocean/godo"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("digitalocean://123"), as the existing CCM wrote them. It MUST NOT
// change: the providerID is immutable and every existing Node carries it.
const ProviderName = cloud.ProviderName

// Provider is the DigitalOcean provider. The framework discovers what it
// can do from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	region    string
	instances *instances
	lb        cloudprovider.LoadBalancer
	// client is the godo client Init built, for the extra controllers.
	client *godo.Client

	// metadataURL is the droplet metadata service's region endpoint; tests
	// point it at a local server.
	metadataURL string
}

var (
	_ framework.Provider             = (*Provider)(nil)
	_ framework.Configurable         = (*Provider)(nil)
	_ framework.InstancesProvider    = (*Provider)(nil)
	_ framework.LoadBalancerProvider = (*Provider)(nil)
)

// New returns an unconfigured provider; framework.Main or
// framework.NewCloud loads its Config and calls Init.
func New() *Provider { return &Provider{metadataURL: defaultMetadataRegionURL} }

// Name implements framework.Provider.
func (p *Provider) Name() string { return ProviderName }

// Config implements framework.Configurable: the framework fills the struct
// before Init.
func (p *Provider) Config() any { return &p.cfg }

// Init builds the godo client and fails fast, before the CCM starts its
// controllers, when the API is unreachable, the token is wrong or the
// region cannot be known. No error contains the token.
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	c, err := newGodoClient(&p.cfg, p.httpClient(env))
	if err != nil {
		return err
	}
	if err := cloud.CheckAccess(ctx, c); err != nil {
		switch cloud.StatusOf(err) {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("the DigitalOcean API rejected the token (check DO_ACCESS_TOKEN or DO_ACCESS_TOKEN_FILE): %w", err)
		}
		return fmt.Errorf("cannot use the DigitalOcean API at %s (DO_OVERRIDE_URL): %w", cloudapi.RedactURL(c.BaseURL), err)
	}
	region := p.cfg.Region
	if region == "" {
		region, err = cloud.RegionFromMetadata(ctx, p.metadataURL)
		if err != nil {
			return fmt.Errorf("REGION is not set and the region is not known from the droplet metadata service (set REGION): %w", err)
		}
	} else if err := cloud.CheckRegion(ctx, c, region); err != nil {
		return err
	}
	p.region = region
	p.client = c
	p.instances = &instances{client: c, defaultRegion: region}
	p.lb = newLoadBalancer(env, c, lbSettings{region: region, vpcUUID: p.cfg.ClusterVPCID, clusterID: p.cfg.ClusterID, codec: framework.Codec(p), nodeTag: p.cfg.LBDropletTag}, p.cfg.DefaultLBType)
	klog.FromContext(ctx).Info("DigitalOcean provider initialized",
		"apiURL", cloudapi.RedactURL(c.BaseURL), "region", region, "clusterID", p.cfg.ClusterID)
	return nil
}

// httpClient is the framework's cloudapi client with DO_API_RATE_LIMIT_QPS
// as the default rate; --cloud-api-qps overrides it.
func (p *Provider) httpClient(env *framework.Env) *http.Client {
	return env.NewHTTPClient(cloudapi.Options{QPS: p.cfg.APIQPS})
}

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }
