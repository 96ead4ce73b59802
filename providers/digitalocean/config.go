package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// Load balancer types DEFAULT_LB_TYPE accepts, as the API spells them.
const (
	LoadBalancerTypeRegional        = "REGIONAL"
	LoadBalancerTypeRegionalNetwork = "REGIONAL_NETWORK"
)

// Config is the provider's configuration: exactly the environment variables
// of the existing DigitalOcean CCM, so its manifests work unchanged. The
// framework fills it before Init (see package framework/config): tag
// defaults, then the --cloud-config file (keys from the json tags), then the
// environment, which wins. Every bad setting is reported at once, named by
// its variable.
//
// This struct is the only place the provider reads its environment.
type Config struct {
	// Token is a config.Secret: it never prints, and DO_ACCESS_TOKEN_FILE
	// (set instead of DO_ACCESS_TOKEN) names a file that is re-read when it
	// changes, so a rotated Kubernetes Secret applies without a restart.
	Token        config.Secret `json:"accessToken" env:"DO_ACCESS_TOKEN" required:"true" secret:"access-token" doc:"DigitalOcean API token (read and write). DO_ACCESS_TOKEN_FILE names a file holding it instead."`
	OverrideURL  string        `json:"overrideURL" env:"DO_OVERRIDE_URL" doc:"Base URL of the DigitalOcean API, instead of https://api.digitalocean.com/."`
	ClusterID    string        `json:"clusterID" env:"DO_CLUSTER_ID" doc:"Cluster ID; load balancers the CCM creates are tagged k8s:<ID>."`
	ClusterVPCID string        `json:"clusterVPCID" env:"DO_CLUSTER_VPC_ID" doc:"VPC UUID new load balancers are placed in."`
	Region       string        `json:"region" env:"REGION" doc:"Region slug (e.g. nyc3). When unset, it is read from the droplet metadata service."`
	APIQPS       float64       `json:"apiRateLimitQPS" env:"DO_API_RATE_LIMIT_QPS" default:"0" doc:"Requests per second to the API, 0 for unlimited, unless --cloud-api-qps is set."`
	// DefaultLBType is normalised to upper case by Validate.
	DefaultLBType            string   `json:"defaultLBType" env:"DEFAULT_LB_TYPE" default:"REGIONAL_NETWORK" doc:"Load balancer type when a Service does not set one: REGIONAL or REGIONAL_NETWORK."`
	PublicAccessFirewallName string   `json:"publicAccessFirewallName" env:"PUBLIC_ACCESS_FIREWALL_NAME" doc:"Name of the firewall the public-access-firewall controller keeps: it opens the NodePorts of NodePort Services (and the ports of external REGIONAL_NETWORK load balancers) to the workers. Set together with PUBLIC_ACCESS_FIREWALL_TAGS; unset turns the controller off."`
	PublicAccessFirewallTags []string `json:"publicAccessFirewallTags" env:"PUBLIC_ACCESS_FIREWALL_TAGS" doc:"Droplet tags the public-access firewall applies to (comma-separated)."`
	// LBDropletTag is ccmkit's own (see lb_nodetag.go): the existing CCM
	// always lists droplet IDs.
	LBDropletTag string `json:"lbDropletTag" env:"DO_LB_DROPLET_TAG" doc:"Droplet tag that load balancers target instead of listing droplet IDs (a ccmkit setting; the existing CCM has none). The CCM puts the tag on the droplets of the nodes the load balancers serve and takes it off any other droplet that has it, so a node joining or leaving costs one or two tag calls instead of one update per load balancer. Give it a tag of its own, one per cluster, that nothing else sets or relies on (e.g. k8s-<cluster>-lb-nodes). Existing load balancers move to the tag at their next sync; a Service can keep droplet IDs with the droplet-targets annotation. Unset (the default): every load balancer lists its droplets."`
}

// Tags the CCM refuses as DO_LB_DROPLET_TAG, compared in any case: DOKS
// puts them on every worker droplet, and the CCM takes the tag off every
// droplet that is no load-balancer node.
var reservedNodeTags = []string{"k8s", "k8s:worker"}

var (
	_ framework.SecretMaker       = (*Provider)(nil)
	_ framework.CredentialChecker = (*Provider)(nil)
)

// CredentialSecret implements framework.SecretMaker: make-secret prints
// kube-system/digitalocean with the token under access-token (the Token
// field's secret tag), the Secret the existing CCM and the shipped
// manifests read.
func (p *Provider) CredentialSecret() framework.CredentialSecret {
	return framework.CredentialSecret{Name: "digitalocean"}
}

// CheckCredentials implements framework.CredentialChecker: make-secret
// checks the token, and REGION when it is set, as Init does; unlike Init it
// does not ask the droplet metadata service, which answers only on a
// droplet.
func (p *Provider) CheckCredentials(ctx context.Context, env *framework.Env) error {
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
	if p.cfg.Region != "" {
		return cloud.CheckRegion(ctx, c, p.cfg.Region)
	}
	return nil
}

// Validate checks what tags cannot express. config.Load calls it after
// everything else passed.
func (c *Config) Validate() error {
	var errs []error
	if c.OverrideURL != "" {
		switch u, err := url.Parse(c.OverrideURL); {
		case err != nil:
			// Not err itself: it quotes the URL, which may hold user:password.
			errs = append(errs, errors.New("DO_OVERRIDE_URL: not a valid URL"))
		case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
			errs = append(errs, fmt.Errorf("DO_OVERRIDE_URL: %s is not an http(s) URL", cloudapi.RedactURL(u)))
		}
	}
	if c.APIQPS < 0 {
		errs = append(errs, fmt.Errorf("DO_API_RATE_LIMIT_QPS: must not be negative, got %g", c.APIQPS))
	}
	if (c.PublicAccessFirewallName == "") != (len(c.PublicAccessFirewallTags) == 0) {
		errs = append(errs, errors.New("PUBLIC_ACCESS_FIREWALL_NAME and PUBLIC_ACCESS_FIREWALL_TAGS: set both, or neither"))
	}
	if err := c.validateLBDropletTag(); err != nil {
		errs = append(errs, err)
	}
	switch t := strings.ToUpper(strings.TrimSpace(c.DefaultLBType)); t {
	case LoadBalancerTypeRegional, LoadBalancerTypeRegionalNetwork:
		c.DefaultLBType = t
	default:
		errs = append(errs, fmt.Errorf("DEFAULT_LB_TYPE: %q is not %s or %s",
			c.DefaultLBType, LoadBalancerTypeRegional, LoadBalancerTypeRegionalNetwork))
	}
	return errors.Join(errs...)
}

// validateLBDropletTag checks DO_LB_DROPLET_TAG: a tag the API accepts,
// and none that other tools put on droplets, since the CCM takes it off
// every droplet that is no load-balancer node: the cluster's own tag
// (k8s:<DO_CLUSTER_ID>, which also marks its load balancers), DOKS's
// worker tags and the public-access firewall's tags.
func (c *Config) validateLBDropletTag() error {
	tag := c.LBDropletTag
	if tag == "" {
		return nil
	}
	if !cloud.ValidTag.MatchString(tag) {
		return fmt.Errorf("DO_LB_DROPLET_TAG: %q is not a DigitalOcean tag (letters, digits, ':', '-', '_'; at most 255)", cloud.Truncate(tag, 40))
	}
	taken := map[string]string{}
	for _, t := range reservedNodeTags {
		taken[strings.ToLower(t)] = "a tag DigitalOcean Kubernetes puts on every worker droplet"
	}
	if own := ownerTag(c.ClusterID); own != "" {
		taken[strings.ToLower(own)] = "the cluster's own tag (DO_CLUSTER_ID)"
	}
	for _, t := range c.PublicAccessFirewallTags {
		taken[strings.ToLower(t)] = "a tag of the public-access firewall (PUBLIC_ACCESS_FIREWALL_TAGS)"
	}
	if why, ok := taken[strings.ToLower(tag)]; ok {
		return fmt.Errorf("DO_LB_DROPLET_TAG: %s is %s; the CCM takes this tag off every droplet that is no load-balancer node, so it needs a tag of its own", tag, why)
	}
	return nil
}
