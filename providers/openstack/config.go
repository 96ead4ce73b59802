package openstack

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// The types of cloud.conf live in internal/cloud, which the CSI driver
// (package csidriver) reads the same file with; these aliases are them.

// Config is the provider's configuration: the cloud.conf INI file of the
// OpenStack cloud-controller-manager (OCCM), read from --cloud-config, with
// the same sections and keys, so an OCCM cloud.conf works unchanged. The
// json tags are the INI section and key names (see INI); the framework fills
// the struct before Init: tag defaults, then the file, then the few
// environment variables OCCM reads, then Validate.
//
// Like OCCM, the provider reads no OS_* credentials from the environment:
// OCCM deliberately ignores them, and so does this provider, so a stray
// OS_PASSWORD in the CCM's environment cannot change which project it acts
// on. This struct is the only place the provider reads its environment.
type Config = cloud.Config

// GlobalSection is [Global]: Keystone credentials and the API endpoints.
type GlobalSection = cloud.GlobalSection

// LoadBalancerSection is [LoadBalancer]: the cluster-wide defaults of the
// Octavia load balancers, which Service annotations override (see
// LoadBalancerConfig).
type LoadBalancerSection = cloud.LoadBalancerSection

// LoadBalancerClasses are the [LoadBalancerClass "<name>"] sections, by name.
type LoadBalancerClasses = cloud.LoadBalancerClasses

// LoadBalancerClassSection is one [LoadBalancerClass "<name>"] section.
type LoadBalancerClassSection = cloud.LoadBalancerClassSection

// NetworkingSection is [Networking]: which server addresses a Node reports.
type NetworkingSection = cloud.NetworkingSection

// RouteSection is [Route].
type RouteSection = cloud.RouteSection

// MetadataSection is [Metadata].
type MetadataSection = cloud.MetadataSection

// BlockStorageSection is [BlockStorage]: the Cinder CSI driver's settings
// (cinder-csi-plugin's keys); the CCM does not use them. The in-tree
// provider's bs-version and trust-device-path are accepted and ignored.
type BlockStorageSection = cloud.BlockStorageSection

// INI reads OCCM's cloud.conf: the git-config style INI that OCCM parses
// with gopkg.in/gcfg.v1, matched as gcfg matches it, but reporting every
// unknown section, unknown key and bad value at once, each naming its
// section, key and line, and never quoting the value of a secret.
// Sections and keys are the json tags of the Config fields.
var INI config.Format = cloud.INI

var _ framework.SecretMaker = (*Provider)(nil)

// CredentialSecret implements framework.SecretMaker: make-secret prints
// kube-system/cloud-config with the --cloud-config file, byte for byte,
// under cloud.conf, as OCCM and the shipped manifests read it. Its check
// against the cloud is Init: Keystone, the catalog, Nova (and Octavia when
// [LoadBalancer] enabled).
func (p *Provider) CredentialSecret() framework.CredentialSecret {
	return framework.CredentialSecret{Name: "cloud-config", ConfigFileKey: "cloud.conf"}
}
