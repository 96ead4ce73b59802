package brightbox

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// The existing CCM's default OAuth application (k8ssdk's brightbox_auth.go):
// the password grant uses it when BRIGHTBOX_CLIENT is not set. It is a
// public identifier of Brightbox's CLI application, not a credential.
const (
	defaultAppClientID     = "app-dkmch"
	defaultAppClientSecret = "uogoelzgt0nwawb" //nolint:gosec // the public application identifier k8ssdk ships, not a secret
	defaultAPIURL          = "https://api.gb1.brightbox.com"
)

// Config is the provider's configuration: the environment variables of the
// existing Brightbox CCM (read by k8ssdk), so its manifests and its
// brightbox-credentials Secret work unchanged. The framework fills it before
// Init (see package framework/config); every bad setting is reported at
// once, named by its variable.
//
// Two ways to authenticate, as the existing CCM:
//
//   - an API client: BRIGHTBOX_CLIENT (cli-xxxxx) and BRIGHTBOX_CLIENT_SECRET,
//     the OAuth2 client-credentials grant;
//   - a user: BRIGHTBOX_USER_NAME and BRIGHTBOX_PASSWORD, the password grant
//     through an OAuth application, BRIGHTBOX_CLIENT (app-xxxxx) or, unset,
//     the existing CCM's default one.
//
// Every credential is a config.Secret: it never prints, and its _FILE
// variant names a file re-read when it changes, so a rotated Kubernetes
// Secret applies at the next token without a restart.
type Config struct {
	Client       config.Secret `json:"client" env:"BRIGHTBOX_CLIENT" secret:"BRIGHTBOX_CLIENT" doc:"API client ID (cli-xxxxx) for the client-credentials grant, or the OAuth application ID (app-xxxxx) used with BRIGHTBOX_USER_NAME; with user credentials it defaults to the existing CCM's application."`
	ClientSecret config.Secret `json:"clientSecret" env:"BRIGHTBOX_CLIENT_SECRET" secret:"BRIGHTBOX_CLIENT_SECRET" doc:"Secret of BRIGHTBOX_CLIENT."`
	UserName     config.Secret `json:"userName" env:"BRIGHTBOX_USER_NAME" secret:"BRIGHTBOX_USER_NAME" doc:"User (e-mail address) for the password grant, instead of an API client."`
	Password     config.Secret `json:"password" env:"BRIGHTBOX_PASSWORD" secret:"BRIGHTBOX_PASSWORD" doc:"Password of BRIGHTBOX_USER_NAME."`
	Account      string        `json:"account" env:"BRIGHTBOX_ACCOUNT" doc:"Account ID (acc-xxxxx). When unset, the one account the credentials can use; set it when they can use several."`
	APIURL       string        `json:"apiURL" env:"BRIGHTBOX_API_URL" secret:"BRIGHTBOX_API_URL" default:"https://api.gb1.brightbox.com" doc:"Base URL of the Brightbox API; tokens come from its /token/ path."`
	// LegacyAddresses restores nodeAddressesFromServer of the existing CCM.
	LegacyAddresses bool `json:"legacyAddresses" env:"BRIGHTBOX_LEGACY_ADDRESSES" default:"false" doc:"Report Node addresses as the existing CCM did: every interface IPv4 and IPv6 and every cloud IP as ExternalIP, no InternalIP. Off, the private IPv4 is the InternalIP and IPv6 and cloud IPs are ExternalIPs."`
}

var _ framework.SecretMaker = (*Provider)(nil)

// CredentialSecret implements framework.SecretMaker: make-secret prints
// kube-system/brightbox-credentials, the Secret the Kubernetes cluster
// builder creates and the shipped manifests read, with the credentials and
// BRIGHTBOX_API_URL under keys named like their variables (the secret tags
// above). Its check against the cloud is Init: a token, and the account.
func (p *Provider) CredentialSecret() framework.CredentialSecret {
	return framework.CredentialSecret{Name: "brightbox-credentials"}
}

// userGrant reports whether the config names a user (the password grant)
// rather than an API client.
func (c *Config) userGrant() bool { return !c.UserName.IsZero() || !c.Password.IsZero() }

// Validate checks what tags cannot express: a complete set of credentials
// and an http(s) API URL. config.Load calls it after everything else passed.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.userGrant():
		if c.UserName.IsZero() {
			errs = append(errs, errors.New("BRIGHTBOX_USER_NAME: required with BRIGHTBOX_PASSWORD"))
		}
		if c.Password.IsZero() {
			errs = append(errs, errors.New("BRIGHTBOX_PASSWORD: required with BRIGHTBOX_USER_NAME"))
		}
		if c.Client.IsZero() != c.ClientSecret.IsZero() {
			errs = append(errs, errors.New("BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET: set both for your own OAuth application, or neither for the default one"))
		}
	case c.Client.IsZero() && c.ClientSecret.IsZero():
		errs = append(errs, errors.New("BRIGHTBOX_CLIENT: no credentials: set BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET (an API client), or BRIGHTBOX_USER_NAME and BRIGHTBOX_PASSWORD"))
	case c.Client.IsZero():
		errs = append(errs, errors.New("BRIGHTBOX_CLIENT: required with BRIGHTBOX_CLIENT_SECRET"))
	case c.ClientSecret.IsZero():
		errs = append(errs, errors.New("BRIGHTBOX_CLIENT_SECRET: required with BRIGHTBOX_CLIENT"))
	}
	if _, err := c.apiBase(); err != nil {
		errs = append(errs, err)
	}
	if c.Account != "" && !strings.HasPrefix(c.Account, "acc-") {
		errs = append(errs, fmt.Errorf("BRIGHTBOX_ACCOUNT: %q is not an account ID (acc-xxxxx)", c.Account))
	}
	return errors.Join(errs...)
}

// apiBase returns BRIGHTBOX_API_URL with a trailing slash, so the API
// version and the token path resolve under it rather than replacing its
// last path segment.
func (c *Config) apiBase() (string, error) {
	raw := c.APIURL
	if raw == "" {
		raw = defaultAPIURL
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// Not err itself: it quotes the URL, which may hold user:password.
		return "", errors.New("BRIGHTBOX_API_URL: not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", fmt.Errorf("BRIGHTBOX_API_URL: %s is not an http(s) URL", cloudapi.RedactURL(u))
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("BRIGHTBOX_API_URL: %s has a query or fragment", cloudapi.RedactURL(u))
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String(), nil
}
