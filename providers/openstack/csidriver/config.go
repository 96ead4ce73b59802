package csidriver

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// CSI driver defaults: cinder-csi-plugin's.
const (
	// DriverName is cinder-csi-plugin's driver name, which existing
	// PersistentVolumes, StorageClasses and the CSIDriver object carry.
	DriverName = "cinder.csi.openstack.org"
	// TopologyKey is the topology segment key: the availability zone.
	TopologyKey = "topology." + DriverName + "/zone"
	// DefaultNodeVolumeAttachLimit is the volumes per node NodeGetInfo
	// reports when [BlockStorage] node-volume-attach-limit is not set
	// (cinder-csi-plugin's documented default and its maximum).
	DefaultNodeVolumeAttachLimit = 256

	// defaultMetadataURL is Nova's metadata service, reachable only from
	// a server; metadataPath is the document under it (and under a
	// config drive's root).
	defaultMetadataURL = "http://169.254.169.254"
	metadataPath       = "/openstack/latest/meta_data.json"
)

// Config is what the CSI driver reads from its environment; everything
// else is in cloud.conf (the CCM's openstack.Config, from
// --cloud-config). Both settings exist for running the node plugin where
// the metadata service or the config drive is elsewhere than on a Nova
// server (tests, a proxy); each has a flag of the same name that wins
// over it.
type Config struct {
	MetadataURL    string `json:"metadataURL" env:"OS_METADATA_URL" default:"http://169.254.169.254" doc:"Base URL of the Nova metadata service the node plugin reads its server ID and availability zone from (--metadata-url); /openstack/latest/meta_data.json is appended."`
	ConfigDriveDir string `json:"configDriveDir" env:"OS_CONFIG_DRIVE_DIR" doc:"Directory where the config drive is mounted, holding openstack/latest/meta_data.json (--config-drive-dir). When unset, the node plugin mounts the filesystem labelled config-2 read-only for the time it reads it, as cinder-csi-plugin does."`
}

// validate checks what tags cannot express; no error holds a URL's
// credentials.
func (c *Config) validate() error {
	switch u, err := url.Parse(c.MetadataURL); {
	case err != nil:
		return errors.New("OS_METADATA_URL: not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("OS_METADATA_URL: %s is not an http(s) URL", cloudapi.RedactURL(u))
	}
	return nil
}

// csiFlags are cinder-csi-plugin's flags (cmd/cinder-csi-plugin, v1.36),
// so that its manifests' arguments work unchanged, and the two of
// Config. --endpoint is framework/csi's own; --http-endpoint serves
// the framework's /metrics (and /healthz) unless --metrics-address is
// set.
type csiFlags struct {
	fs *pflag.FlagSet

	cloudConfig        []string
	cloudNames         []string
	additionalTopology map[string]string
	cluster            string
	httpEndpoint       string
	provideController  bool
	provideNode        bool
	withTopology       bool
	userAgent          []string
	pvcAnnotations     bool

	metadataURL, configDriveDir string

	// Accepted and unused: deprecated by cinder-csi-plugin, or its
	// Kubernetes client's, which only --pvc-annotations uses.
	nodeID, master, kubeconfig string
	noClient                   bool
	kubeAPIQPS                 float32
	kubeAPIBurst               int
	minResyncPeriod            time.Duration
}

func newCSIFlags() *csiFlags {
	f := &csiFlags{fs: pflag.NewFlagSet("openstack", pflag.ContinueOnError)}
	fs := f.fs
	fs.StringSliceVar(&f.cloudConfig, "cloud-config", nil, "The cloud.conf file, in the OpenStack CCM's format with a [BlockStorage] section (the Secret cloud-config, key cloud.conf). Required by the controller; the node plugin reads only [Metadata] and [BlockStorage] from it. Repeat it to merge several files, later ones winning.")
	fs.StringSliceVar(&f.cloudNames, "cloud-name", []string{""}, "cinder-csi-plugin's [Global \"<name>\"] clouds: only the default cloud (\"\") is supported.")
	fs.StringToStringVar(&f.additionalTopology, "additional-topology", map[string]string{}, "More topology segments the node reports, e.g. topology.kubernetes.io/region=RegionOne (repeatable).")
	fs.StringVar(&f.cluster, "cluster", "", "The cluster's identifier, set on every volume the driver creates as the metadata cinder.csi.openstack.org/cluster.")
	fs.StringVar(&f.httpEndpoint, "http-endpoint", "", "cinder-csi-plugin's metrics address (host:port): serves /metrics and /healthz here unless --metrics-address is set.")
	fs.BoolVar(&f.provideController, "provide-controller-service", true, "Serve the controller service (with --mode: only if the mode has it too).")
	fs.BoolVar(&f.provideNode, "provide-node-service", true, "Serve the node service (with --mode: only if the mode has it too).")
	fs.BoolVar(&f.withTopology, "with-topology", true, "Place volumes by availability zone ("+TopologyKey+") and report the node's.")
	fs.StringArrayVar(&f.userAgent, "user-agent", nil, "Extra text for the OpenStack API requests' User-Agent (repeatable).")
	fs.BoolVar(&f.pvcAnnotations, "pvc-annotations", false, "Accepted for cinder-csi-plugin's manifests: the PVC annotations cinder.csi.openstack.org/affinity and anti-affinity are not read (volumes get no scheduler hints).")
	fs.StringVar(&f.metadataURL, "metadata-url", "", "Nova metadata service base URL (OS_METADATA_URL; default "+defaultMetadataURL+").")
	fs.StringVar(&f.configDriveDir, "config-drive-dir", "", "Directory where the config drive is mounted (OS_CONFIG_DRIVE_DIR; default: mount the filesystem labelled config-2).")

	fs.StringVar(&f.nodeID, "nodeid", "", "Ignored: the node ID is the server's ID from the instance metadata.")
	_ = fs.MarkDeprecated("nodeid", "it is ignored; the node ID is read from the instance metadata")
	fs.BoolVar(&f.noClient, "node-service-no-os-client", false, "Ignored: the node service never uses OpenStack credentials.")
	_ = fs.MarkDeprecated("node-service-no-os-client", "it is ignored; the node service never uses OpenStack credentials")
	fs.StringVar(&f.master, "master", "", "Ignored (cinder-csi-plugin's Kubernetes client, for --pvc-annotations).")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Ignored (cinder-csi-plugin's Kubernetes client, for --pvc-annotations).")
	fs.Float32Var(&f.kubeAPIQPS, "kube-api-qps", 5, "Ignored (cinder-csi-plugin's Kubernetes client, for --pvc-annotations).")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", 10, "Ignored (cinder-csi-plugin's Kubernetes client, for --pvc-annotations).")
	fs.DurationVar(&f.minResyncPeriod, "min-resync-period", 12*time.Hour, "Ignored (cinder-csi-plugin's Kubernetes client, for --pvc-annotations).")
	return f
}

func (f *csiFlags) changed(name string) bool {
	fl := f.fs.Lookup(name)
	return fl != nil && fl.Changed
}

// serviceMode is the services to serve: those of mode (--mode) that
// --provide-controller-service and --provide-node-service allow; an error
// when none is left.
func (f *csiFlags) serviceMode(mode csi.Mode) (csi.Mode, error) {
	controller := (mode == csi.ModeController || mode == csi.ModeAll) && f.provideController
	node := (mode == csi.ModeNode || mode == csi.ModeAll) && f.provideNode
	switch {
	case controller && node:
		return csi.ModeAll, nil
	case controller:
		return csi.ModeController, nil
	case node:
		return csi.ModeNode, nil
	}
	return mode, fmt.Errorf("no CSI service to serve: --mode %s, --provide-controller-service=%t, --provide-node-service=%t",
		mode, f.provideController, f.provideNode)
}

// check rejects what cinder-csi-plugin does and this driver does not:
// clouds other than the default one.
func (f *csiFlags) check() error {
	for _, name := range f.cloudNames {
		if name != "" {
			return fmt.Errorf("--cloud-name %q: only the default cloud ([Global], --cloud-name \"\") is supported, not [Global %q] sections", name, name)
		}
	}
	return nil
}

// loadCSIEnv reads the environment (lookup; nil is the process's) and
// applies --metadata-url and --config-drive-dir.
func loadCSIEnv(lookup func(string) (string, bool), f *csiFlags) (Config, error) {
	var c Config
	if err := config.Load(&c, config.Source{LookupEnv: lookup}); err != nil {
		return c, err
	}
	if f.changed("metadata-url") {
		c.MetadataURL = f.metadataURL
	}
	if f.changed("config-drive-dir") {
		c.ConfigDriveDir = f.configDriveDir
	}
	c.MetadataURL = strings.TrimSuffix(c.MetadataURL, "/")
	return c, c.validate()
}

// loadCSICloudConfig reads the --cloud-config files as cinder-csi-plugin
// does, merged in order, later files winning, with the CCM's INI
// decoding (so an OCCM cloud.conf works too, and a cinder-csi-plugin one
// works with the CCM), and checks them for use: a controller's [Global]
// as the CCM's, [BlockStorage] and [Metadata]; a node plugin's, which
// makes no API call, without [Global]. A node plugin may have no file at
// all, or one that does not exist (cinder-csi-plugin's node plugin
// carries on with the defaults then). It returns the remarks about the
// files to log (a missing file, ignored keys). No error holds a secret.
func loadCSICloudConfig(lookup func(string) (string, bool), files []string, mode csi.Mode) (cloud.Config, []string, error) {
	cfg := cloud.ConfigFor(cloud.UseCSIController)
	var notes []string
	if mode == csi.ModeNode {
		cfg = cloud.ConfigFor(cloud.UseCSINode)
		var present []string
		for _, f := range files {
			if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
				notes = append(notes, fmt.Sprintf("--cloud-config %s does not exist: the node plugin uses the defaults", f))
				continue
			}
			present = append(present, f)
		}
		files = present
	} else if len(files) == 0 {
		return cfg, nil, errors.New("--cloud-config: required by the controller: the cloud.conf with the [Global] credentials " +
			"(the Secret cloud-config, key cloud.conf, as the OpenStack CCM reads it)")
	}
	src := config.Source{Format: cloud.INI, LookupEnv: lookup}
	if len(files) > 0 {
		src.File, src.Format = files[0], iniFiles(files[1:])
	}
	err := config.Load(&cfg, src)
	return cfg, append(notes, cloud.Notes(&cfg)...), err
}

// iniFiles is the INI format of the first --cloud-config file followed by
// the others: each is decoded over what the ones before it set, as gcfg
// reads cinder-csi-plugin's files one after the other.
type iniFiles []string

func (iniFiles) Name() string { return "ini" }

func (more iniFiles) Decode(data []byte, out any) error {
	errs := []error{cloud.INI.Decode(data, out)}
	for _, path := range more {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("--cloud-config: %w", err))
			continue
		}
		if err := cloud.INI.Decode(data, out); err != nil {
			errs = append(errs, fmt.Errorf("in %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}
