package csidriver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// CSI driver names and defaults. Rancher 1.x has had no CSI driver (its
// volumes were served to containers by Cattle and the hosts' storage
// services, and to Kubernetes by nothing: see docs/rancher), so nothing
// existing constrains them.
const (
	// DriverName is the driver name PersistentVolumes, StorageClasses
	// and the CSIDriver object carry: under Rancher's domain and named
	// for Cattle, whose volumes these are, as cloud drivers' names are
	// (dobs.csi.digitalocean.com). It must not change once volumes carry
	// it.
	DriverName = "cattle.csi.rancher.com"
	// TopologyKey is the topology segment key: none. A Cattle volume
	// belongs to the environment, and its storage driver runs on the
	// hosts it runs on; which those are is the storage stack's
	// scheduling, which the driver neither knows nor promises.
	TopologyKey = ""
	// DefaultStorageDriver is the storage driver of a StorageClass that
	// names none: rancher-nfs, the one Rancher's documentation uses.
	DefaultStorageDriver = "rancher-nfs"
	// DefaultVolumePluginDir is where the Docker daemon finds its volume
	// plugins' sockets, <dir>/<driver>.sock: the storage services of
	// rancher/storage listen there.
	DefaultVolumePluginDir = "/run/docker/plugins"
)

// Config is the CSI driver's configuration: the environment, read
// through framework/config like the CCM's rancher.Config. The controller
// takes the CCM's CATTLE_* settings (the same variables, so the same
// rancher-credentials Secret serves both); the node plugin makes no API
// call and needs none of them: it names itself by NODE_NAME and talks to
// its host's volume plugins in RANCHER_VOLUME_PLUGIN_DIR.
type Config struct {
	URL       string        `json:"url" env:"CATTLE_URL" secret:"CATTLE_URL" doc:"URL of the Cattle API of the cluster's Rancher environment, as for the CCM: http(s)://<rancher>/v2-beta/projects/<id>. The controller's only; the node plugin needs no credentials."`
	AccessKey config.Secret `json:"accessKey" env:"CATTLE_ACCESS_KEY" secret:"CATTLE_ACCESS_KEY" doc:"Access key of an environment API key of that environment (the controller's)."`
	SecretKey config.Secret `json:"secretKey" env:"CATTLE_SECRET_KEY" secret:"CATTLE_SECRET_KEY" doc:"Secret key of CATTLE_ACCESS_KEY."`
	NodeName  string        `json:"nodeName" env:"NODE_NAME" doc:"The node plugin's Kubernetes node name, its CSI node ID: set it from the downward API (fieldRef spec.nodeName). Required by the node plugin."`
	PluginDir string        `json:"volumePluginDir" env:"RANCHER_VOLUME_PLUGIN_DIR" default:"/run/docker/plugins" doc:"Directory of the host's Docker volume plugin sockets, <dir>/<storage driver>.sock, as the Docker daemon finds them (the node plugin's; plugins known only by a .spec or .json file in /etc/docker/plugins are not found)."`
}

// credentials are the controller's settings, which cloud.Connect takes.
func (c *Config) credentials() *cloud.Credentials {
	return &cloud.Credentials{URL: c.URL, AccessKey: c.AccessKey, SecretKey: c.SecretKey}
}

// hasCredentials reports whether any of the controller's settings is set.
func (c *Config) hasCredentials() bool {
	return c.URL != "" || !c.AccessKey.IsZero() || !c.SecretKey.IsZero()
}

// checkCredentials checks that the controller's settings are all there,
// naming each one missing.
func (c *Config) checkCredentials() error {
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("CATTLE_URL: required by the controller: the environment's API URL, such as "+cloud.ExampleURL))
	}
	if c.AccessKey.IsZero() {
		errs = append(errs, errors.New("CATTLE_ACCESS_KEY: required by the controller: the access key of an environment API key (or CATTLE_ACCESS_KEY_FILE)"))
	}
	if c.SecretKey.IsZero() {
		errs = append(errs, errors.New("CATTLE_SECRET_KEY: required by the controller: the secret key of CATTLE_ACCESS_KEY (or CATTLE_SECRET_KEY_FILE)"))
	}
	return errors.Join(errs...)
}

// checkNode checks the node plugin's own setting, NODE_NAME.
func (c *Config) checkNode() error {
	if c.NodeName == "" {
		return errors.New("NODE_NAME: required by the node plugin: its Kubernetes node name, from the downward API (env valueFrom fieldRef spec.nodeName)")
	}
	if msgs := validation.IsDNS1123Subdomain(c.NodeName); len(msgs) > 0 {
		return fmt.Errorf("NODE_NAME: %q is not a Kubernetes node name: %s", truncateText(c.NodeName, 80), strings.Join(msgs, "; "))
	}
	return nil
}

// validate checks every setting but the mode's own (the credentials,
// NODE_NAME: Init checks those), after config.Load; no error holds a
// secret.
func (c *Config) validate() error {
	if !filepath.IsAbs(c.PluginDir) {
		return fmt.Errorf("RANCHER_VOLUME_PLUGIN_DIR: %q is not an absolute path", truncateText(c.PluginDir, 200))
	}
	return nil
}

// loadConfig reads the environment (lookup; nil is the process's) and
// validates it.
func loadConfig(lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	if err := config.Load(&cfg, config.Source{LookupEnv: lookup}); err != nil {
		return cfg, err
	}
	cfg.PluginDir = filepath.Clean(cfg.PluginDir)
	return cfg, cfg.validate()
}

// truncateText cuts s to n bytes, for errors that quote input.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
