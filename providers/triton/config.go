package triton

import (
	"errors"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
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
// each used only when its TRITON_* variable is unset. The CSI driver reads
// them too (package cloud holds what both binaries share).
type LegacyVariables = cloud.LegacyVariables

// Validate checks what tags cannot express: the SDC_* fallbacks applied,
// the URL, account and key present, and the load-balancer, firewall and
// metrics (CMON) settings. The key itself is parsed by Init, whose errors name
// TRITON_KEY_MATERIAL.
func (c *Config) Validate() error {
	c.applyLegacy()
	var errs []error
	if _, err := cloud.ParseURL(c.URL); err != nil {
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
	cr := c.credentials()
	cr.ApplyLegacy()
	c.URL, c.Account, c.User, c.KeyID, c.KeyMaterial = cr.URL, cr.Account, cr.User, cr.KeyID, cr.KeyMaterial
}

// credentials are the settings cloud.Connect takes.
func (c *Config) credentials() cloud.Credentials {
	return cloud.Credentials{URL: c.URL, Account: c.Account, User: c.User, KeyID: c.KeyID, KeyMaterial: c.KeyMaterial, SDC: c.SDC}
}

// validateLoadBalancer runs the load-balancer settings' own checks
// (lb_config.go), when they have any.
func validateLoadBalancer(lb *LoadBalancerSettings) error {
	if v, ok := any(lb).(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}
