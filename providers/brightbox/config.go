package brightbox

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
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

// credentials are the settings internal/cloud's Connect takes.
func (c *Config) credentials() cloud.Credentials {
	return cloud.Credentials{Client: c.Client, ClientSecret: c.ClientSecret, UserName: c.UserName, Password: c.Password,
		Account: c.Account, APIURL: c.APIURL}
}

// Validate checks what tags cannot express: a complete set of credentials,
// an http(s) API URL and an account ID's shape (cloud.Credentials.Validate).
// config.Load calls it after everything else passed.
func (c *Config) Validate() error {
	cr := c.credentials()
	return cr.Validate()
}
