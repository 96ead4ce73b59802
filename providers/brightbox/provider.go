package brightbox

import (
	"context"
	"net/http"

	brightbox "github.com/brightbox/gobrightbox/v2"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// ProviderName is the --cloud-provider value and the providerID scheme
// ("brightbox://srv-xxxxx"), as the existing CCM wrote them. It MUST NOT
// change: the providerID is immutable and every existing Node carries it.
const ProviderName = cloud.ProviderName

// Provider is the Brightbox Cloud provider. The framework discovers what it
// can do from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	client    *brightbox.Client
	instances *instances
	lb        cloudprovider.LoadBalancer
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

// Init builds the gobrightbox client and fails fast, before the CCM starts
// its controllers, when the API is unreachable, the credentials are wrong or
// the account cannot be known; every error names the variable to check and
// none contains a secret.
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	cr := p.cfg.credentials()
	c, err := cloud.Connect(ctx, &cr, p.httpClient(env))
	if err != nil {
		return err
	}
	p.client = c
	p.instances = &instances{client: c, legacyAddresses: p.cfg.LegacyAddresses}
	p.lb = newLoadBalancer(env, c, p)
	klog.FromContext(ctx).Info("Brightbox provider initialized",
		"apiURL", cloudapi.RedactURL(c.ResourceBaseURL()), "legacyAddresses", p.cfg.LegacyAddresses)
	return nil
}

// httpClient is the framework's cloudapi client; the --cloud-api-* flags
// set its rate limit and retries.
func (p *Provider) httpClient(env *framework.Env) *http.Client {
	return env.NewHTTPClient(cloudapi.Options{})
}

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }
