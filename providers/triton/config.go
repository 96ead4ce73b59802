package triton

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// Config is the provider's configuration: triton-go's and node-triton's
// environment variables (TRITON_*, or their older SDC_* names), so the
// settings a Triton user has already work. The framework fills it before
// Init (see package framework/config); every bad setting is reported at
// once, named by its variable, and no error holds the key.
//
// The key is a config.Secret: it never prints, and TRITON_KEY_MATERIAL_FILE
// names a file re-read when it changes, so a rotated Kubernetes Secret
// applies at the next request without a restart.
type Config struct {
	URL           string        `json:"url" env:"TRITON_URL" secret:"TRITON_URL" doc:"CloudAPI URL of the cluster's datacenter, such as https://us-east-1.api.joyent.com (SDC_URL is read when it is unset)."`
	Account       string        `json:"account" env:"TRITON_ACCOUNT" secret:"TRITON_ACCOUNT" doc:"Account login the machines belong to (SDC_ACCOUNT is read when it is unset)."`
	User          string        `json:"user" env:"TRITON_USER" secret:"TRITON_USER" doc:"RBAC sub-user whose key signs the requests; unset for the account's own key (SDC_USER is read when it is unset)."`
	KeyID         string        `json:"keyID" env:"TRITON_KEY_ID" secret:"TRITON_KEY_ID" doc:"Fingerprint of the key: MD5 (colon hex, as CloudAPI lists it, MD5: prefix optional) or SHA256:... (as ssh-keygen prints it). Checked against the key at start-up; unset, it is computed (SDC_KEY_ID is read when it is unset)."`
	KeyMaterial   config.Secret `json:"keyMaterial" env:"TRITON_KEY_MATERIAL" secret:"TRITON_KEY_MATERIAL" doc:"The private key, unencrypted: OpenSSH, PKCS#1, PKCS#8 or SEC1 PEM; RSA, ECDSA or Ed25519. Either the key itself or the path of its file (SDC_KEY_MATERIAL is read when it is unset)."`
	SkipTLSVerify bool          `json:"skipTLSVerify" env:"TRITON_SKIP_TLS_VERIFY" doc:"Do not verify CloudAPI's TLS certificate (a test install with a self-signed one). Never in production."`
	Region        string        `json:"region" env:"TRITON_REGION" doc:"The Nodes' topology.kubernetes.io/region. Triton has no regions: by default the datacenter name without its trailing -<number><letters> (us-east-3b is in us-east)."`

	// SDC holds the older names of the variables above.
	SDC LegacyVariables `json:"-"`

	// LoadBalancer holds the cluster-wide load-balancer settings
	// (lb_config.go).
	LoadBalancer LoadBalancerSettings `json:"loadBalancer"`

	// Firewall holds the firewall controller's settings
	// (firewall_config.go).
	Firewall FirewallSettings `json:"firewall"`

	// CMON holds the metrics controller's settings (cmon_config.go).
	CMON CMONSettings `json:"cmon"`
}

// LegacyVariables are the SDC_* names triton-go and node-triton still read,
// each used only when its TRITON_* variable is unset.
type LegacyVariables struct {
	URL         string        `env:"SDC_URL" doc:"Older name of TRITON_URL."`
	Account     string        `env:"SDC_ACCOUNT" doc:"Older name of TRITON_ACCOUNT."`
	User        string        `env:"SDC_USER" doc:"Older name of TRITON_USER."`
	KeyID       string        `env:"SDC_KEY_ID" doc:"Older name of TRITON_KEY_ID."`
	KeyMaterial config.Secret `env:"SDC_KEY_MATERIAL" doc:"Older name of TRITON_KEY_MATERIAL."`
}

// Validate checks what tags cannot express: the SDC_* fallbacks applied,
// the URL, account and key present, and the load-balancer, firewall and
// metrics (CMON) settings. The key itself is parsed by Init, whose errors name
// TRITON_KEY_MATERIAL.
func (c *Config) Validate() error {
	c.applyLegacy()
	var errs []error
	if _, err := c.apiURL(); err != nil {
		errs = append(errs, err)
	}
	if c.Account == "" {
		errs = append(errs, errors.New("TRITON_ACCOUNT: required: the account login (or SDC_ACCOUNT)"))
	}
	if c.KeyMaterial.IsZero() {
		errs = append(errs, errors.New("TRITON_KEY_MATERIAL: required: the private key, or the path of its file (or TRITON_KEY_MATERIAL_FILE, SDC_KEY_MATERIAL)"))
	}
	if err := validateLoadBalancer(&c.LoadBalancer); err != nil {
		errs = append(errs, err)
	}
	if err := c.Firewall.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.CMON.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// applyLegacy fills each unset TRITON_* setting from its SDC_* name.
func (c *Config) applyLegacy() {
	fill := func(dst *string, legacy string) {
		if *dst == "" {
			*dst = legacy
		}
	}
	fill(&c.URL, c.SDC.URL)
	fill(&c.Account, c.SDC.Account)
	fill(&c.User, c.SDC.User)
	fill(&c.KeyID, c.SDC.KeyID)
	if c.KeyMaterial.IsZero() {
		c.KeyMaterial = c.SDC.KeyMaterial
	}
}

// apiURL returns TRITON_URL parsed: an http(s) URL with a host and no
// query. Errors show it redacted (it could hold user:password).
func (c *Config) apiURL() (*url.URL, error) {
	if c.URL == "" {
		return nil, errors.New("TRITON_URL: required: CloudAPI's URL, such as https://us-east-1.api.joyent.com (or SDC_URL)")
	}
	u, err := url.Parse(c.URL)
	switch {
	case err != nil:
		return nil, errors.New("TRITON_URL: not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, fmt.Errorf("TRITON_URL: %s is not an http(s) URL", cloudapi.RedactURL(u))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("TRITON_URL: %s has a query or fragment", cloudapi.RedactURL(u))
	}
	return u, nil
}

// validateLoadBalancer runs the load-balancer settings' own checks
// (lb_config.go), when they have any.
func validateLoadBalancer(lb *LoadBalancerSettings) error {
	if v, ok := any(lb).(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}
