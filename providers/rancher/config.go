package rancher

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// Config is the provider's configuration: the existing CCM's CATTLE_*
// variables, so its manifests and Secret work unchanged, and the host
// labels that give a Node its topology, type and public IP. The framework
// fills it before Init (see package framework/config); every bad setting
// is reported at once, named by its variable.
//
// The API keys are config.Secrets: they never print, and their _FILE
// variants name files re-read when they change, so a rotated Kubernetes
// Secret applies at the next request without a restart.
//
// Cattle has no zones, regions or instance types: users label their hosts
// in Rancher. Each of the *Labels settings is a list of host label keys,
// the first one a host carries winning. When a host carries none, the
// machine driver's configuration Rancher kept for the host (amazonec2,
// digitalocean, azure, packet) gives it where it says it; otherwise the
// Node gets no zone or region label, and the type DefaultInstanceType.
type Config struct {
	URL       string        `json:"url" env:"CATTLE_URL" secret:"CATTLE_URL" doc:"URL of the Cattle API of the cluster's Rancher environment, as Rancher shows it with an environment API key: http(s)://<rancher>/v2-beta/projects/<id> (/v1/... URLs are moved to /v2-beta, as go-rancher does)."`
	AccessKey config.Secret `json:"accessKey" env:"CATTLE_ACCESS_KEY" secret:"CATTLE_ACCESS_KEY" doc:"Access key of an environment API key of that environment."`
	SecretKey config.Secret `json:"secretKey" env:"CATTLE_SECRET_KEY" secret:"CATTLE_SECRET_KEY" doc:"Secret key of CATTLE_ACCESS_KEY."`

	ZoneLabels          []string `json:"zoneLabels" env:"RANCHER_ZONE_LABELS" default:"topology.kubernetes.io/zone,failure-domain.beta.kubernetes.io/zone" doc:"Host label keys whose value is the Node's topology.kubernetes.io/zone, the first one present winning. Without any: the machine driver's zone (amazonec2: region and zone letter, e.g. us-east-1a), else no zone label."`
	RegionLabels        []string `json:"regionLabels" env:"RANCHER_REGION_LABELS" default:"topology.kubernetes.io/region,failure-domain.beta.kubernetes.io/region" doc:"Host label keys whose value is the Node's topology.kubernetes.io/region, the first one present winning. Without any: the machine driver's region (amazonec2, digitalocean, azure location, packet facility), else no region label."`
	InstanceTypeLabels  []string `json:"instanceTypeLabels" env:"RANCHER_INSTANCE_TYPE_LABELS" default:"node.kubernetes.io/instance-type,beta.kubernetes.io/instance-type" doc:"Host label keys whose value is the Node's node.kubernetes.io/instance-type, the first one present winning. Without any: the machine driver's type (amazonec2 instance type, digitalocean and azure size, packet plan), else RANCHER_DEFAULT_INSTANCE_TYPE."`
	DefaultInstanceType string   `json:"defaultInstanceType" env:"RANCHER_DEFAULT_INSTANCE_TYPE" default:"rancher" doc:"Instance type of a host that has no type label and no machine-driver type: the existing CCM's \"rancher\" for every host."`
	ExternalIPLabels    []string `json:"externalIPLabels" env:"RANCHER_EXTERNAL_IP_LABELS" default:"io.rancher.host.external_dns_ip" doc:"Host label keys whose value (an IP, or a comma-separated list) is a public address of the host, reported as an ExternalIP: Rancher's own io.rancher.host.external_dns_ip, which the external-dns service publishes, by default. Empty to use none."`

	// LoadBalancer holds the cluster-wide load-balancer settings
	// (lb_config.go).
	LoadBalancer LoadBalancerSettings `json:"loadBalancer"`
}

var _ framework.SecretMaker = (*Provider)(nil)

// CredentialSecret implements framework.SecretMaker: make-secret prints
// kube-system/rancher-credentials, the Secret the shipped manifests read,
// with CATTLE_URL and the API key under keys named like their variables
// (the secret tags above). Its check against the cloud is Init.
func (p *Provider) CredentialSecret() framework.CredentialSecret {
	return framework.CredentialSecret{Name: "rancher-credentials"}
}

// Validate checks what tags cannot express: the URL, both halves of the
// API key, the label keys, and the load-balancer settings. config.Load
// calls it after everything else passed.
func (c *Config) Validate() error {
	var errs []error
	if _, err := cloud.ParseURL(c.URL); err != nil {
		errs = append(errs, err)
	}
	if c.AccessKey.IsZero() {
		errs = append(errs, errors.New("CATTLE_ACCESS_KEY: required: the access key of an environment API key (or CATTLE_ACCESS_KEY_FILE)"))
	}
	if c.SecretKey.IsZero() {
		errs = append(errs, errors.New("CATTLE_SECRET_KEY: required: the secret key of CATTLE_ACCESS_KEY (or CATTLE_SECRET_KEY_FILE)"))
	}
	for _, s := range []struct {
		name string
		keys []string
	}{
		{"RANCHER_ZONE_LABELS", c.ZoneLabels},
		{"RANCHER_REGION_LABELS", c.RegionLabels},
		{"RANCHER_INSTANCE_TYPE_LABELS", c.InstanceTypeLabels},
		{"RANCHER_EXTERNAL_IP_LABELS", c.ExternalIPLabels},
	} {
		for _, k := range s.keys {
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a label key: %s", s.name, k, strings.Join(msgs, "; ")))
			}
		}
	}
	if c.DefaultInstanceType != "" {
		if msgs := validation.IsValidLabelValue(c.DefaultInstanceType); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("RANCHER_DEFAULT_INSTANCE_TYPE: %q is not a label value: %s", c.DefaultInstanceType, strings.Join(msgs, "; ")))
		}
	}
	if err := validateLoadBalancer(&c.LoadBalancer); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// credentials are the settings cloud.Connect takes.
func (c *Config) credentials() *cloud.Credentials {
	return &cloud.Credentials{URL: c.URL, AccessKey: c.AccessKey, SecretKey: c.SecretKey}
}

// validateLoadBalancer runs the load-balancer settings' own checks
// (lb_config.go), when they have any.
func validateLoadBalancer(lb *LoadBalancerSettings) error {
	if v, ok := any(lb).(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}
