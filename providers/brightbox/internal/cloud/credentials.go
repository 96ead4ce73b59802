package cloud

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

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

// Credentials are what Connect takes: the credentials, the account and
// the API URL, the same environment variables for the CCM (brightbox.Config)
// and the CSI driver (csidriver.Config), each of which documents them in
// its own struct tags and copies them here.
//
// Two ways to authenticate, as the existing CCM:
//
//   - an API client: Client (cli-xxxxx) and ClientSecret, the OAuth2
//     client-credentials grant;
//   - a user: UserName and Password, the password grant through an OAuth
//     application, Client (app-xxxxx) or, unset, the existing CCM's
//     default one.
type Credentials struct {
	Client       config.Secret // BRIGHTBOX_CLIENT
	ClientSecret config.Secret // BRIGHTBOX_CLIENT_SECRET
	UserName     config.Secret // BRIGHTBOX_USER_NAME
	Password     config.Secret // BRIGHTBOX_PASSWORD
	Account      string        // BRIGHTBOX_ACCOUNT
	APIURL       string        // BRIGHTBOX_API_URL; "" is the default
}

// userGrant reports whether the credentials name a user (the password
// grant) rather than an API client.
func (c *Credentials) userGrant() bool { return !c.UserName.IsZero() || !c.Password.IsZero() }

// Validate checks what tags cannot express: a complete set of credentials,
// an http(s) API URL and an account ID's shape. Each error names its
// variable.
func (c *Credentials) Validate() error {
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
	if _, err := c.APIBase(); err != nil {
		errs = append(errs, err)
	}
	if c.Account != "" && !strings.HasPrefix(c.Account, "acc-") {
		errs = append(errs, fmt.Errorf("BRIGHTBOX_ACCOUNT: %q is not an account ID (acc-xxxxx)", c.Account))
	}
	return errors.Join(errs...)
}

// APIBase returns BRIGHTBOX_API_URL with a trailing slash, so the API
// version and the token path resolve under it rather than replacing its
// last path segment. No error holds the URL's credentials.
func (c *Credentials) APIBase() (string, error) {
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
