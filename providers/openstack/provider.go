package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/providerid"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// ProviderName, "openstack", is the --cloud-provider value and the
// providerID scheme, as OCCM wrote them. It MUST NOT change: the providerID
// is immutable and every existing Node carries it.
const ProviderName = cloud.ProviderName

// flavorMicroversion is the first Nova microversion that embeds the flavor
// (with its name) in a server, saving a GET /flavors/{id} per flavor.
const flavorMicroversion = "2.47"

// Codec is OCCM's providerID format: "openstack:///<server ID>" is written;
// "openstack://<region>/<server ID>" (OCCM with OS_CCM_REGIONAL=true) is
// also read.
var Codec = providerid.Codec{Scheme: ProviderName, TripleSlash: true}

// Provider is the OpenStack provider. The framework discovers what it can do
// from the interfaces it implements, checked here at compile time.
type Provider struct {
	cfg       Config
	instances *instances
	// provider is the authenticated gophercloud client Init built.
	provider *gophercloud.ProviderClient
	// lb serves Services of type LoadBalancer (Octavia); nil when
	// [LoadBalancer] enabled is false or the catalog has no Octavia.
	lb cloudprovider.LoadBalancer
	// clock times re-authentication backoff; nil is the real clock.
	clock clock.Clock
}

var (
	_ framework.Provider             = (*Provider)(nil)
	_ framework.Configurable         = (*Provider)(nil)
	_ framework.ConfigFormatter      = (*Provider)(nil)
	_ framework.ProviderIDCodec      = (*Provider)(nil)
	_ framework.InstancesProvider    = (*Provider)(nil)
	_ framework.LoadBalancerProvider = (*Provider)(nil)
)

// New returns an unconfigured provider; framework.Main or
// framework.NewCloud loads its Config and calls Init.
func New() *Provider { return &Provider{} }

// Name implements framework.Provider.
func (p *Provider) Name() string { return ProviderName }

// Config implements framework.Configurable: the framework fills the struct
// from the --cloud-config file before Init.
func (p *Provider) Config() any { return &p.cfg }

// ConfigFormat implements framework.ConfigFormatter: cloud.conf is INI.
func (p *Provider) ConfigFormat() config.Format { return INI }

// ProviderIDCodec implements framework.ProviderIDCodec. It knows the
// configured region, so a Node whose providerID names another region
// ("openstack://<other>/<id>") is an error, never a deleted Node.
func (p *Provider) ProviderIDCodec() providerid.Codec {
	c := Codec
	c.Region = p.cfg.Global.Region
	return c
}

// Instances implements framework.InstancesProvider.
func (p *Provider) Instances() framework.Instances { return p.instances }

// LoadBalancer implements framework.LoadBalancerProvider: Octavia load
// balancers with OCCM's annotations (see LoadBalancerConfig); nil when
// disabled.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// Init authenticates with Keystone and finds Nova in the catalog, failing
// fast, before the CCM starts its controllers, when the credentials are
// rejected or the compute API cannot be used. No error contains a secret.
//
// The settings are the ones the --cloud-config file held at start-up,
// but for the [Global] credentials (see cloud.ConfWatch): every new
// Keystone token, requested when an API refuses the current one (it
// expired, or was revoked by a password change), uses the credentials
// the file holds then, so a rotated cloud-config Secret takes effect
// without a restart (see cloud.Authenticate).
func (p *Provider) Init(ctx context.Context, env *framework.Env) error {
	log := klog.FromContext(ctx)
	for _, note := range cloud.Notes(&p.cfg) {
		log.Info("Cloud config: " + note)
	}
	g := &p.cfg.Global
	hc, err := p.httpClient(ctx, env)
	if err != nil {
		return err
	}
	var conf *cloud.ConfWatch
	if env.CloudConfigFile != "" {
		conf = cloud.NewConfWatch(config.Source{File: env.CloudConfigFile, Format: INI, LookupEnv: env.LookupEnv}, &p.cfg)
	}
	pc, err := cloud.Authenticate(ctx, g, hc, p.clock, conf)
	if err != nil {
		return err
	}
	availability, _ := cloud.EndpointAvailability(g.EndpointType) // checked by Validate
	compute, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: g.Region, Availability: availability})
	if err != nil {
		return fmt.Errorf("no compute (Nova) endpoint for [Global] region %q and os-endpoint-type %q in the Keystone catalog: %w",
			g.Region, availability, err)
	}
	if err := cloud.CheckCompute(ctx, compute); err != nil {
		return err
	}
	microversion := useFlavorMicroversion(ctx, compute)
	rules, err := newAddressRules(&p.cfg.Networking)
	if err != nil {
		return err // checked by Validate
	}
	p.provider = pc
	p.instances = &instances{compute: compute, region: g.Region, rules: rules}
	if p.cfg.LoadBalancer.Enabled {
		eo := gophercloud.EndpointOpts{Region: g.Region, Availability: availability}
		if p.lb, err = newLoadBalancer(ctx, env, pc, eo, &p.cfg, p.instances); err != nil {
			return err
		}
	}
	log.Info("OpenStack provider initialized", "authURL", cloud.RedactedURL(g.AuthURL), "region", g.Region,
		"computeURL", cloud.RedactedURL(compute.Endpoint), "computeMicroversion", microversion)
	return nil
}

// useFlavorMicroversion sets compute's microversion to 2.47 when Nova
// supports it, so servers carry their flavor's name; it returns the
// microversion in use ("" for Nova's default). A Nova without microversions
// (or an unreadable version document) keeps the default: flavors are then
// looked up by ID.
func useFlavorMicroversion(ctx context.Context, compute *gophercloud.ServiceClient) string {
	c, err := utils.RequireMicroversion(cloudapi.WithOperation(ctx, "compute.versions.get"), *compute, flavorMicroversion)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Using Nova's default microversion; flavors are looked up by ID", "reason", err.Error())
		return ""
	}
	compute.Microversion = c.Microversion
	return compute.Microversion
}
