package csidriver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// CSI driver names and defaults. Triton has had no CSI driver before this
// one (its NFS volumes were Docker's and CloudAPI's alone), so nothing
// existing constrains them.
const (
	// DriverName is the driver name PersistentVolumes, StorageClasses
	// and the CSIDriver object carry: the volume type, tritonnfs, under
	// Joyent's domain, as cloud drivers' names are
	// (dobs.csi.digitalocean.com). It must not change once volumes carry
	// it.
	DriverName = "tritonnfs.csi.joyent.com"
	// TopologyKey is the topology segment key, in the form Kubernetes'
	// drivers give theirs (topology.<driver>/<what>): a value is the UUID
	// of a fabric network. An RFD 26 volume is reachable only on the
	// fabric networks its NFS server has a NIC on, so a volume is
	// accessible from the nodes on its network (the first, if it has
	// several), and a node is in the segment of its first fabric NIC.
	TopologyKey = "topology." + DriverName + "/network"
	// DefaultMdataGet is the command the node plugin reads its instance
	// metadata with: mdata-get, from Joyent's mdata-client, which every
	// Triton image has.
	DefaultMdataGet = "mdata-get"

	// volumeType is RFD 26's one volume type: an NFS server in a zone of
	// its own, exporting a ZFS dataset.
	volumeType = "tritonnfs"
)

// Config is the CSI driver's configuration: the environment, read
// through framework/config like the CCM's Config, with the CCM's
// credentials (the same variables, TRITON_* or their SDC_* names, so the
// same Secret serves both). Only the controller uses them: the node plugin
// makes no API call, it reads its instance UUID and NICs from the
// instance metadata.
type Config struct {
	URL           string        `json:"url" env:"TRITON_URL" secret:"TRITON_URL" doc:"CloudAPI URL of the cluster's datacenter, such as https://us-east-1.api.joyent.com (SDC_URL is read when it is unset). The controller's only; the node plugin needs no credentials."`
	Account       string        `json:"account" env:"TRITON_ACCOUNT" secret:"TRITON_ACCOUNT" doc:"Account login the volumes belong to (SDC_ACCOUNT is read when it is unset)."`
	User          string        `json:"user" env:"TRITON_USER" secret:"TRITON_USER" doc:"RBAC sub-user whose key signs the requests; unset for the account's own key (SDC_USER is read when it is unset)."`
	KeyID         string        `json:"keyID" env:"TRITON_KEY_ID" secret:"TRITON_KEY_ID" doc:"Fingerprint of the key: MD5 (colon hex, MD5: prefix optional) or SHA256:.... Checked against the key at start-up; unset, it is computed (SDC_KEY_ID is read when it is unset)."`
	KeyMaterial   config.Secret `json:"keyMaterial" env:"TRITON_KEY_MATERIAL" secret:"TRITON_KEY_MATERIAL" doc:"The private key, unencrypted: OpenSSH, PKCS#1, PKCS#8 or SEC1 PEM; RSA, ECDSA or Ed25519. Either the key itself or the path of its file (SDC_KEY_MATERIAL is read when it is unset). The controller needs it; a process serving both sides without it serves the node side only."`
	SkipTLSVerify bool          `json:"skipTLSVerify" env:"TRITON_SKIP_TLS_VERIFY" doc:"Do not verify CloudAPI's TLS certificate (a test install with a self-signed one). Never in production."`
	MdataGet      string        `json:"mdataGet" env:"TRITON_MDATA_GET" default:"mdata-get" doc:"Command the node plugin reads its instance metadata with, as mdata-get KEY (sdc:uuid, sdc:nics): a name looked up in PATH, or a path. The node plugin's container needs it and the metadata transport (/dev/ttyS1 on a hardware VM, the zone's metadata socket on an LX zone) from the host."`

	// SDC holds the older names of the credentials' variables.
	SDC cloud.LegacyVariables `json:"-"`
}

// credentials are the settings cloud.Connect takes, with the SDC_* names
// applied.
func (c *Config) credentials() cloud.Credentials {
	cr := cloud.Credentials{URL: c.URL, Account: c.Account, User: c.User, KeyID: c.KeyID, KeyMaterial: c.KeyMaterial, SDC: c.SDC}
	cr.ApplyLegacy()
	return cr
}

// hasCredentials reports whether the key is set: what makes a process
// serving both sides a controller too.
func (c *Config) hasCredentials() bool {
	cr := c.credentials()
	return !cr.KeyMaterial.IsZero()
}

// checkCredentials checks what the controller needs: the URL, the
// account and the key, each missing one named.
func (c *Config) checkCredentials() error {
	cr := c.credentials()
	var errs []error
	if _, err := cloud.ParseURL(cr.URL); err != nil {
		errs = append(errs, err)
	}
	if cr.Account == "" {
		errs = append(errs, errors.New("TRITON_ACCOUNT: required by the controller: the account login (or SDC_ACCOUNT)"))
	}
	if cr.KeyMaterial.IsZero() {
		errs = append(errs, errors.New("TRITON_KEY_MATERIAL: required by the controller: the account's private key, or the path of its file "+
			"(or TRITON_KEY_MATERIAL_FILE, SDC_KEY_MATERIAL)"))
	}
	return errors.Join(errs...)
}

// validate checks every setting but the credentials, which only the
// controller needs (Init checks them); no error holds a secret or a URL's
// credentials.
func (c *Config) validate() error {
	var errs []error
	if strings.TrimSpace(c.MdataGet) == "" {
		errs = append(errs, errors.New("TRITON_MDATA_GET: must name a command (default "+DefaultMdataGet+")"))
	}
	if cr := c.credentials(); cr.URL != "" {
		if _, err := cloud.ParseURL(cr.URL); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// loadConfig reads the environment (lookup; nil is the process's) and
// validates it.
func loadConfig(lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	if err := config.Load(&cfg, config.Source{LookupEnv: lookup}); err != nil {
		return cfg, fmt.Errorf("the Triton CSI driver's settings: %w", err)
	}
	return cfg, cfg.validate()
}
