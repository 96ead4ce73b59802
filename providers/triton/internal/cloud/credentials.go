package cloud

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// Name is the cloud's name: the CCM's --cloud-provider value and
// providerID scheme, and the provider label of both binaries' CloudAPI
// metrics.
const Name = "triton"

// Credentials are what addresses and signs CloudAPI requests: the
// settings the CCM's Config and the CSI driver's share (the same
// variables, TRITON_* or their SDC_* names, so one Secret serves both).
// Each binary documents them in its own config struct; it hands them to
// Connect as Credentials.
type Credentials struct {
	URL, Account, User, KeyID string
	KeyMaterial               config.Secret
	// SDC holds the older names of the variables above (ApplyLegacy).
	SDC LegacyVariables
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

// ApplyLegacy fills each unset TRITON_* setting from its SDC_* name.
func (c *Credentials) ApplyLegacy() {
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

// ParseURL returns TRITON_URL, raw, parsed: an http(s) URL with a host
// and no query. Errors show it redacted (it could hold user:password).
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("TRITON_URL: required: CloudAPI's URL, such as https://us-east-1.api.joyent.com (or SDC_URL)")
	}
	u, err := url.Parse(raw)
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
