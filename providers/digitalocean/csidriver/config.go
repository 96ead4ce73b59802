package csidriver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// CSI driver defaults: csi-digitalocean's.
const (
	// DriverName is csi-digitalocean's driver name, which existing
	// PersistentVolumes, StorageClasses and the CSIDriver object carry.
	DriverName = "dobs.csi.digitalocean.com"
	// TopologyKey is the topology segment key: the region slug.
	TopologyKey = "region"
	// DefaultVolumeLimit is the volumes per node NodeGetInfo reports
	// (csi-digitalocean's --volume-limit default; the API takes 15 today).
	DefaultVolumeLimit = 7
	// defaultMetadataURL is the droplet metadata service, reachable only
	// from a droplet.
	defaultMetadataURL = "http://169.254.169.254"
)

// Config is the CSI driver's configuration: the environment (through
// framework/config, like the CCM's digitalocean.Config) and
// csi-digitalocean's flags, which win over it, so csi-digitalocean's
// manifests work unchanged. The token comes from the same Secret as the
// CCM's (kube-system/digitalocean, key access-token).
type Config struct {
	// Token is needed by the controller only; the node plugin makes no
	// API call.
	Token       config.Secret `json:"accessToken" env:"DIGITALOCEAN_ACCESS_TOKEN" secret:"access-token" doc:"DigitalOcean API token (read and write), for the controller; the node plugin needs none. DIGITALOCEAN_ACCESS_TOKEN_FILE names a file holding it instead (re-read when it changes). csi-digitalocean's --token sets it too, but shows it in the process list."`
	APIURL      string        `json:"apiURL" env:"DIGITALOCEAN_API_URL" default:"https://api.digitalocean.com/" doc:"Base URL of the DigitalOcean API (--url)."`
	Region      string        `json:"region" env:"REGION" doc:"Region slug the controller creates and lists volumes in (--region). When unset, it is read from the droplet metadata service."`
	Tag         string        `json:"tag" env:"DO_TAG" doc:"Tag put on the volumes and snapshots the driver creates, and on volumes it attaches (--do-tag), e.g. k8s:<cluster ID>."`
	VolumeLimit int           `json:"volumeLimit" env:"DO_VOLUME_LIMIT" default:"7" doc:"Volumes per node NodeGetInfo reports (--volume-limit); 0 reports no limit."`
	APIQPS      float64       `json:"apiRateLimitQPS" env:"DO_API_RATE_LIMIT_QPS" default:"0" doc:"Requests per second to the API, 0 for unlimited (--do-api-rate-limit)."`
	MetadataURL string        `json:"metadataURL" env:"DIGITALOCEAN_METADATA_URL" default:"http://169.254.169.254" doc:"Base URL of the droplet metadata service the driver reads its droplet ID and region from (--metadata-url)."`
	PageSize    int           `json:"volumesPageSize" env:"DO_VOLUMES_PAGE_SIZE" default:"200" doc:"Page size of the volume and snapshot lists (--default-volumes-page-size), at most 200."`
}

// validate checks what tags cannot express, after the flags are applied
// (so not as config.Load's Validate). No error holds the token or a URL's
// credentials.
func (c *Config) validate() error {
	var errs []error
	for _, u := range []struct{ name, value string }{
		{"DIGITALOCEAN_API_URL", c.APIURL}, {"DIGITALOCEAN_METADATA_URL", c.MetadataURL},
	} {
		switch parsed, err := url.Parse(u.value); {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: not a valid URL", u.name))
		case parsed.Scheme != "http" && parsed.Scheme != "https", parsed.Host == "":
			errs = append(errs, fmt.Errorf("%s: %s is not an http(s) URL", u.name, cloudapi.RedactURL(parsed)))
		}
	}
	if c.Region != "" && !cloud.RegionSlug.MatchString(c.Region) {
		errs = append(errs, fmt.Errorf("REGION: %q is not a region slug", cloud.Truncate(c.Region, 40)))
	}
	if c.Tag != "" && !cloud.ValidTag.MatchString(c.Tag) {
		errs = append(errs, fmt.Errorf("DO_TAG: %q is not a DigitalOcean tag (letters, digits, ':', '-', '_'; at most 255)", cloud.Truncate(c.Tag, 40)))
	}
	if c.VolumeLimit < 0 {
		errs = append(errs, fmt.Errorf("DO_VOLUME_LIMIT: must not be negative, got %d", c.VolumeLimit))
	}
	if c.APIQPS < 0 {
		errs = append(errs, fmt.Errorf("DO_API_RATE_LIMIT_QPS: must not be negative, got %g", c.APIQPS))
	}
	if c.PageSize < 1 || c.PageSize > cloud.ListPageSize {
		errs = append(errs, fmt.Errorf("DO_VOLUMES_PAGE_SIZE: must be 1 to %d, got %d", cloud.ListPageSize, c.PageSize))
	}
	return errors.Join(errs...)
}

// flags are csi-digitalocean's flags (cmd/do-csi-plugin), so that its
// manifests' arguments work unchanged; each one that is given wins over
// the environment.
type flags struct {
	fs                 *pflag.FlagSet
	token, url, region string
	tag, driverName    string
	metadataURL        string
	debugAddr          string
	pageSize, limit    uint
	qps                float64
	validateAttachment bool
}

func newFlags() *flags {
	f := &flags{fs: pflag.NewFlagSet("digitalocean", pflag.ContinueOnError)}
	fs := f.fs
	fs.StringVar(&f.token, "token", "", "DigitalOcean API token, for the controller (csi-digitalocean's flag; prefer DIGITALOCEAN_ACCESS_TOKEN or DIGITALOCEAN_ACCESS_TOKEN_FILE, which the process list does not show).")
	fs.StringVar(&f.url, "url", "", "DigitalOcean API URL (DIGITALOCEAN_API_URL; default https://api.digitalocean.com/).")
	fs.StringVar(&f.region, "region", "", "Region slug the controller creates and lists volumes in (REGION); default: the droplet metadata service's.")
	fs.StringVar(&f.tag, "do-tag", "", "Tag DigitalOcean volumes and snapshots on create and volumes on attach (DO_TAG).")
	fs.StringVar(&f.driverName, "driver-name", DriverName, "The CSI driver name.")
	fs.StringVar(&f.metadataURL, "metadata-url", "", "Droplet metadata service base URL (DIGITALOCEAN_METADATA_URL; default "+defaultMetadataURL+").")
	fs.StringVar(&f.debugAddr, "debug-addr", "", "csi-digitalocean's health server address: serves /healthz and /metrics here unless --metrics-address is set.")
	fs.UintVar(&f.pageSize, "default-volumes-page-size", 0, "Page size of the volume and snapshot lists (DO_VOLUMES_PAGE_SIZE; default 200).")
	fs.Float64Var(&f.qps, "do-api-rate-limit", 0, "Requests per second to the API, 0 for unlimited (DO_API_RATE_LIMIT_QPS).")
	fs.UintVar(&f.limit, "volume-limit", DefaultVolumeLimit, "Volumes per node NodeGetInfo reports (DO_VOLUME_LIMIT).")
	fs.BoolVar(&f.validateAttachment, "validate-attachment", false, "Accepted for csi-digitalocean's manifests; the node always waits for the attached volume's device.")
	return f
}

func (f *flags) changed(name string) bool {
	fl := f.fs.Lookup(name)
	return fl != nil && fl.Changed
}

// apply sets the flags that were given on cfg.
func (f *flags) apply(cfg *Config) {
	if f.changed("token") {
		cfg.Token = config.NewSecret(f.token)
	}
	set := func(name string, dst *string, v string) {
		if f.changed(name) {
			*dst = v
		}
	}
	set("url", &cfg.APIURL, f.url)
	set("region", &cfg.Region, f.region)
	set("do-tag", &cfg.Tag, f.tag)
	set("metadata-url", &cfg.MetadataURL, f.metadataURL)
	if f.changed("volume-limit") {
		cfg.VolumeLimit = int(min(f.limit, 1<<20))
	}
	if f.changed("default-volumes-page-size") && f.pageSize > 0 { // 0: csi-digitalocean's "the API's default"
		cfg.PageSize = int(min(f.pageSize, 1<<20))
	}
	if f.changed("do-api-rate-limit") {
		cfg.APIQPS = f.qps
	}
}

// loadConfig reads the environment (lookup; nil is the process's),
// applies the flags given and validates the result.
func loadConfig(lookup func(string) (string, bool), given *flags) (Config, error) {
	// The flags win over the environment: load the environment, apply
	// them, then check the whole.
	var cfg Config
	if err := config.Load(&cfg, config.Source{LookupEnv: lookup}); err != nil {
		return cfg, err
	}
	if given != nil {
		given.apply(&cfg)
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	cfg.MetadataURL = strings.TrimSuffix(cfg.MetadataURL, "/")
	return cfg, cfg.validate()
}
