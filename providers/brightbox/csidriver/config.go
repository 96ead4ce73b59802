package csidriver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// CSI driver names and defaults. Brightbox has had no CSI driver before
// this one, so nothing existing constrains them.
const (
	// DriverName is the driver name PersistentVolumes, StorageClasses
	// and the CSIDriver object carry: under Brightbox's domain, as cloud
	// drivers' names are (dobs.csi.digitalocean.com, csi.hetzner.cloud).
	// It must not change once volumes carry it.
	DriverName = "csi.brightbox.com"
	// TopologyKey is the topology segment key: none. gobrightbox v2.2.2
	// can neither choose a volume's zone when it creates one nor read it
	// (the API's volumes have a zone that brightbox-cli shows, but
	// VolumeOptions and Volume have no field for it), and Brightbox does
	// not document that an attach is limited to a zone, so the driver
	// makes no placement promise it could not keep: its volumes are
	// accessible from every node.
	TopologyKey = ""
	// DefaultVolumeLimit is the volumes per node NodeGetInfo reports:
	// Brightbox's "up to 6 in total" per server. A server that boots from
	// a network volume (a block storage server type) uses one of them:
	// set BRIGHTBOX_VOLUME_LIMIT to 5 on such nodes.
	DefaultVolumeLimit = 6
	// apiVolumesPerServer is the API's own limit, against which a refused
	// attach is judged ErrLimit.
	apiVolumesPerServer = 6
)

// Config is the CSI driver's configuration: the environment, read
// through framework/config like the CCM's (brightbox.Config), with the CCM's
// credentials (the same variables, so the same brightbox-credentials
// Secret serves both). Only the controller uses them: the node plugin
// makes no API call, it reads its server ID from the metadata service.
type Config struct {
	Client       config.Secret `json:"client" env:"BRIGHTBOX_CLIENT" secret:"BRIGHTBOX_CLIENT" doc:"API client ID (cli-xxxxx) for the client-credentials grant, or the OAuth application ID (app-xxxxx) used with BRIGHTBOX_USER_NAME; with user credentials it defaults to the existing CCM's application. The controller's only; the node plugin needs no credentials."`
	ClientSecret config.Secret `json:"clientSecret" env:"BRIGHTBOX_CLIENT_SECRET" secret:"BRIGHTBOX_CLIENT_SECRET" doc:"Secret of BRIGHTBOX_CLIENT."`
	UserName     config.Secret `json:"userName" env:"BRIGHTBOX_USER_NAME" secret:"BRIGHTBOX_USER_NAME" doc:"User (e-mail address) for the password grant, instead of an API client."`
	Password     config.Secret `json:"password" env:"BRIGHTBOX_PASSWORD" secret:"BRIGHTBOX_PASSWORD" doc:"Password of BRIGHTBOX_USER_NAME."`
	Account      string        `json:"account" env:"BRIGHTBOX_ACCOUNT" doc:"Account ID (acc-xxxxx). When unset, the one account the credentials can use; set it when they can use several."`
	APIURL       string        `json:"apiURL" env:"BRIGHTBOX_API_URL" secret:"BRIGHTBOX_API_URL" default:"https://api.gb1.brightbox.com" doc:"Base URL of the Brightbox API; tokens come from its /token/ path."`
	VolumeLimit  int           `json:"volumeLimit" env:"BRIGHTBOX_VOLUME_LIMIT" default:"6" doc:"Volumes per node NodeGetInfo reports: Brightbox attaches up to 6 to a server, its boot volume included (5 on a server that boots from a network volume); 0 reports no limit."`
	MetadataURL  string        `json:"metadataURL" env:"BRIGHTBOX_METADATA_URL" default:"http://169.254.169.254" doc:"Base URL of the server metadata service the node plugin reads its server ID from (<URL>/latest/meta-data/instance-id)."`
}

// credentials are the settings internal/cloud's Connect takes, the same
// as the CCM's.
func (c *Config) credentials() cloud.Credentials {
	return cloud.Credentials{Client: c.Client, ClientSecret: c.ClientSecret, UserName: c.UserName, Password: c.Password,
		Account: c.Account, APIURL: c.APIURL}
}

// hasCredentials reports whether any credential is set.
func (c *Config) hasCredentials() bool {
	return !c.Client.IsZero() || !c.ClientSecret.IsZero() || !c.UserName.IsZero() || !c.Password.IsZero()
}

// validate checks every setting but the credentials, which only the
// controller needs (Init checks them); no error holds a secret or a URL's
// credentials.
func (c *Config) validate() error {
	var errs []error
	switch u, err := url.Parse(c.MetadataURL); {
	case err != nil:
		errs = append(errs, errors.New("BRIGHTBOX_METADATA_URL: not a valid URL"))
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		errs = append(errs, fmt.Errorf("BRIGHTBOX_METADATA_URL: %s is not an http(s) URL", cloudapi.RedactURL(u)))
	}
	if c.VolumeLimit < 0 {
		errs = append(errs, fmt.Errorf("BRIGHTBOX_VOLUME_LIMIT: must not be negative, got %d", c.VolumeLimit))
	}
	cr := c.credentials()
	if _, err := cr.APIBase(); err != nil {
		errs = append(errs, err)
	}
	if c.Account != "" && !strings.HasPrefix(c.Account, "acc-") {
		errs = append(errs, fmt.Errorf("BRIGHTBOX_ACCOUNT: %q is not an account ID (acc-xxxxx)", truncateText(c.Account, 40)))
	}
	return errors.Join(errs...)
}

// loadConfig reads the environment (lookup; nil is the process's) and
// validates it.
func loadConfig(lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	if err := config.Load(&cfg, config.Source{LookupEnv: lookup}); err != nil {
		return cfg, err
	}
	cfg.MetadataURL = strings.TrimSuffix(cfg.MetadataURL, "/")
	return cfg, cfg.validate()
}
