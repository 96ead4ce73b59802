package cloud

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// Config is cloud.conf, the INI file of the OpenStack
// cloud-controller-manager (OCCM), read from --cloud-config, with the same
// sections and keys, so an OCCM cloud.conf works unchanged: the CCM's
// configuration (openstack.Config, an alias) and the file the CSI driver
// reads too (see ConfigFor). The json tags are the INI section and key
// names (see INI); config.Load fills the struct: tag defaults, then the
// file, then the few environment variables OCCM reads, then Validate.
//
// Like OCCM, the provider reads no OS_* credentials from the environment:
// OCCM deliberately ignores them, and so does this provider, so a stray
// OS_PASSWORD in the CCM's environment cannot change which project it acts
// on. This struct is the only place the provider reads its environment.
type Config struct {
	Global            GlobalSection       `json:"Global"`
	LoadBalancer      LoadBalancerSection `json:"LoadBalancer"`
	LoadBalancerClass LoadBalancerClasses `json:"LoadBalancerClass" doc:"[LoadBalancerClass \"<name>\"] sections, chosen by the loadbalancer.openstack.org/class Service annotation; each may set floating-network-id, floating-subnet-id, floating-subnet, floating-subnet-tags, network-id, subnet-id and member-subnet-id."`
	Networking        NetworkingSection   `json:"Networking"`
	Route             RouteSection        `json:"Route"`
	Metadata          MetadataSection     `json:"Metadata"`
	// BlockStorage is read by the CSI driver (package csidriver) only;
	// the CCM accepts it, so one cloud.conf serves both.
	BlockStorage BlockStorageSection `json:"BlockStorage"`

	// RegionalProviderID is OCCM's OS_CCM_REGIONAL; Validate rejects true.
	RegionalProviderID bool   `json:"-" env:"OS_CCM_REGIONAL" doc:"OCCM's switch to regional providerIDs (openstack://<region>/<id>). Not supported: true is rejected at start-up. Nodes that already carry such providerIDs are still recognised."`
	EnvCloud           string `json:"-" env:"OS_CLOUD" doc:"With [Global] use-clouds: the cloud entry of clouds.yaml, when [Global] cloud is not set."`
	EnvCloudsFile      string `json:"-" env:"OS_CLIENT_CONFIG_FILE" doc:"With [Global] use-clouds: the clouds.yaml path, when [Global] clouds-file is not set."`

	// notes are non-fatal remarks about the file (ignored obsolete keys),
	// logged by Init (see Notes).
	notes []string
	// cloudsFiles are the clouds.yaml and secure.yaml files [Global]
	// use-clouds merged, which Init watches for changed credentials as
	// it watches the --cloud-config file.
	cloudsFiles []string
	// use, set before loading (ConfigFor), is who reads the file: for the
	// CSI driver [BlockStorage] is checked, OS_CCM_REGIONAL is not its
	// business, and a node plugin, which makes no API call, needs no
	// [Global].
	use Use
}

// Use is who loads a Config: the CCM, or the CSI driver's controller or
// node plugin.
type Use int

// The readers of cloud.conf.
const (
	UseCCM Use = iota
	UseCSIController
	UseCSINode
)

// ConfigFor is the empty Config u loads the file into. The zero Config is
// the CCM's.
//
// ConfigFor, Notes and the other helpers of Config are functions, not
// methods: Config is the provider package's exported openstack.Config (an
// alias), whose method set stays Validate.
func ConfigFor(u Use) Config { return Config{use: u} }

// Notes are the non-fatal remarks loading c made about the file (ignored
// sections, obsolete keys), for the reader to log.
func Notes(c *Config) []string { return c.notes }

// GlobalSection is [Global]: Keystone credentials and the API endpoints.
type GlobalSection struct {
	AuthURL      string `json:"auth-url" doc:"Keystone URL, e.g. https://keystone.example.com:5000/v3. Required (here or in clouds.yaml)."`
	Region       string `json:"region" doc:"Region of the compute, network and load-balancer endpoints in the Keystone catalog; also the Nodes' topology.kubernetes.io/region. Required (here or in clouds.yaml)."`
	EndpointType string `json:"os-endpoint-type" doc:"Catalog interface to use: public (default), internal or admin."`

	Username string        `json:"username" doc:"Keystone user name (with user-domain-name/-id or domain-name/-id)."`
	UserID   string        `json:"user-id" doc:"Keystone user ID, instead of username."`
	Password config.Secret `json:"password" doc:"Password of the user."`

	TenantID          string `json:"tenant-id" doc:"Project ID to scope the token to."`
	TenantName        string `json:"tenant-name" doc:"Project name to scope the token to (with tenant-domain-name/-id or domain-name/-id)."`
	ProjectID         string `json:"project-id" doc:"Alias of tenant-id."`
	ProjectName       string `json:"project-name" doc:"Alias of tenant-name."`
	TenantDomainID    string `json:"tenant-domain-id" doc:"Domain ID of the project."`
	TenantDomainName  string `json:"tenant-domain-name" doc:"Domain name of the project."`
	ProjectDomainID   string `json:"project-domain-id" doc:"Alias of tenant-domain-id."`
	ProjectDomainName string `json:"project-domain-name" doc:"Alias of tenant-domain-name."`
	UserDomainID      string `json:"user-domain-id" doc:"Domain ID of the user."`
	UserDomainName    string `json:"user-domain-name" doc:"Domain name of the user."`
	DomainID          string `json:"domain-id" doc:"Domain ID of the user and of the project when their own domain settings are not set."`
	DomainName        string `json:"domain-name" doc:"Domain name of the user and of the project when their own domain settings are not set."`

	TrustID         string        `json:"trust-id" doc:"Keystone trust to scope the token to."`
	TrusteeID       string        `json:"trustee-id" doc:"User ID of the trustee, instead of user-id, with trust-id."`
	TrusteePassword config.Secret `json:"trustee-password" doc:"Password of the trustee, instead of password, with trust-id."`

	ApplicationCredentialID     string        `json:"application-credential-id" doc:"ID of a Keystone application credential, instead of a password."`
	ApplicationCredentialName   string        `json:"application-credential-name" doc:"Name of an application credential (with username or user-id and the user's domain)."`
	ApplicationCredentialSecret config.Secret `json:"application-credential-secret" doc:"Secret of the application credential."`

	CAFile      string `json:"ca-file" doc:"PEM bundle of the CAs that sign the OpenStack API certificates, instead of the system's."`
	CertFile    string `json:"cert-file" doc:"Client certificate (PEM) for TLS client authentication, with key-file."`
	KeyFile     string `json:"key-file" doc:"Private key (PEM) of cert-file."`
	TLSInsecure bool   `json:"tls-insecure" doc:"Do not verify the API servers' certificates (for tests only)."`

	UseClouds  bool   `json:"use-clouds" doc:"Read credentials from a clouds.yaml; settings in this section win over it."`
	CloudsFile string `json:"clouds-file" doc:"Path of the clouds.yaml (default: OS_CLIENT_CONFIG_FILE, then ./clouds.yaml, ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml)."`
	Cloud      string `json:"cloud" doc:"Entry of clouds.yaml to use (default: OS_CLOUD, or the only entry)."`
}

// LoadBalancerSection is [LoadBalancer]: the cluster-wide defaults of the
// Octavia load balancers, which Service annotations override (see
// LoadBalancerConfig).
type LoadBalancerSection struct {
	Enabled                        bool          `json:"enabled" default:"true" doc:"Serve Services of type LoadBalancer."`
	UseOctavia                     bool          `json:"use-octavia" doc:"Obsolete (Octavia is always used); accepted and ignored."`
	LBVersion                      string        `json:"lb-version" doc:"Only v2 is supported."`
	SubnetID                       string        `json:"subnet-id" doc:"Subnet of the load balancer VIP."`
	MemberSubnetID                 string        `json:"member-subnet-id" doc:"Subnet of the pool members."`
	NetworkID                      string        `json:"network-id" doc:"Network of the load balancer VIP, when subnet-id is not set."`
	FloatingNetworkID              string        `json:"floating-network-id" doc:"External network for floating IPs."`
	FloatingSubnetID               string        `json:"floating-subnet-id" doc:"External subnet for floating IPs."`
	FloatingSubnet                 string        `json:"floating-subnet" doc:"Name pattern of the external subnet for floating IPs."`
	FloatingSubnetTags             string        `json:"floating-subnet-tags" doc:"Tags of the external subnet for floating IPs."`
	LBMethod                       string        `json:"lb-method" default:"ROUND_ROBIN" doc:"Pool algorithm: ROUND_ROBIN, LEAST_CONNECTIONS, SOURCE_IP or SOURCE_IP_PORT."`
	LBProvider                     string        `json:"lb-provider" default:"amphora" doc:"Octavia provider, e.g. amphora or ovn."`
	CreateMonitor                  bool          `json:"create-monitor" doc:"Create health monitors."`
	MonitorDelay                   time.Duration `json:"monitor-delay" default:"5s" doc:"Health monitor interval."`
	MonitorTimeout                 time.Duration `json:"monitor-timeout" default:"3s" doc:"Health monitor timeout; at most monitor-delay."`
	MonitorMaxRetries              uint          `json:"monitor-max-retries" default:"1" doc:"Successful checks before a member is ONLINE (1-10)."`
	MonitorMaxRetriesDown          uint          `json:"monitor-max-retries-down" default:"3" doc:"Failed checks before a member is ERROR (1-10)."`
	ManageSecurityGroups           bool          `json:"manage-security-groups" doc:"Manage a security group per Service that opens its NodePorts on the member nodes' ports (as OCCM)."`
	InternalLB                     bool          `json:"internal-lb" doc:"Create internal load balancers (no floating IP) by default."`
	NodeSelector                   string        `json:"node-selector" doc:"Comma-separated key=value labels the member Nodes must carry."`
	CascadeDelete                  bool          `json:"cascade-delete" default:"true" doc:"Delete load balancers with cascade=true."`
	FlavorID                       string        `json:"flavor-id" doc:"Octavia flavor."`
	AvailabilityZone               string        `json:"availability-zone" doc:"Octavia availability zone."`
	EnableIngressHostname          bool          `json:"enable-ingress-hostname" doc:"Report <ip>.<ingress-hostname-suffix> as the hostname of PROXY-protocol load balancers."`
	IngressHostnameSuffix          string        `json:"ingress-hostname-suffix" default:"nip.io" doc:"DNS suffix for enable-ingress-hostname."`
	MaxSharedLB                    int           `json:"max-shared-lb" default:"2" doc:"Services that may share one load balancer (at least 1): a Service whose load-balancer-id annotation names a load balancer that other Services use joins it only while its tags list fewer Services than this (Octavia API 2.5 or newer)."`
	ContainerStore                 string        `json:"container-store" default:"barbican" doc:"Store of TLS container refs: barbican or external."`
	DefaultTLSContainerRef         string        `json:"default-tls-container-ref" doc:"TLS container for TERMINATED_HTTPS listeners."`
	ProviderRequiresSerialAPICalls bool          `json:"provider-requires-serial-api-calls" doc:"Update members one by one instead of in a batch."`
}

// LoadBalancerClasses are the [LoadBalancerClass "<name>"] sections, by name.
type LoadBalancerClasses map[string]*LoadBalancerClassSection

// LoadBalancerClassSection is one [LoadBalancerClass "<name>"] section.
type LoadBalancerClassSection struct {
	FloatingNetworkID  string `json:"floating-network-id"`
	FloatingSubnetID   string `json:"floating-subnet-id"`
	FloatingSubnet     string `json:"floating-subnet"`
	FloatingSubnetTags string `json:"floating-subnet-tags"`
	NetworkID          string `json:"network-id"`
	SubnetID           string `json:"subnet-id"`
	MemberSubnetID     string `json:"member-subnet-id"`
}

// NetworkingSection is [Networking]: which server addresses a Node reports.
type NetworkingSection struct {
	IPv6SupportDisabled bool     `json:"ipv6-support-disabled" doc:"Report no IPv6 addresses."`
	PublicNetworkName   []string `json:"public-network-name" doc:"Networks whose addresses are ExternalIPs; repeat the key for several."`
	InternalNetworkName []string `json:"internal-network-name" doc:"Networks whose addresses are InternalIPs; when set, fixed addresses on other networks are left out. Repeat the key for several."`
	AddressSortOrder    string   `json:"address-sort-order" doc:"Comma-separated CIDRs: addresses in the first come first, and so on; within one CIDR by value."`
}

// RouteSection is [Route].
type RouteSection struct {
	RouterID string `json:"router-id" doc:"Neutron router for pod-network routes."`
}

// MetadataSection is [Metadata].
type MetadataSection struct {
	SearchOrder    string        `json:"search-order" default:"configDrive,metadataService" doc:"Where instance metadata is read: configDrive, metadataService, or both comma-separated."`
	RequestTimeout time.Duration `json:"request-timeout" doc:"Timeout of one OpenStack API request (as in OCCM, which applies it to every API call); --cloud-api-timeout wins."`
}

// BlockStorageSection is [BlockStorage]: the Cinder CSI driver's settings
// (cinder-csi-plugin's keys); the CCM does not use them. The in-tree
// provider's bs-version and trust-device-path are accepted and ignored.
type BlockStorageSection struct {
	NodeVolumeAttachLimit    int    `json:"node-volume-attach-limit" doc:"CSI driver: the volumes a node may have attached (NodeGetInfo's max_volumes_per_node), at most 256; 0 (or unset) is 256."`
	RescanOnResize           bool   `json:"rescan-on-resize" doc:"CSI driver: accepted for cinder-csi-plugin's cloud.conf and ignored: the node does not rescan a grown device (a virtio-blk disk shows its new size by itself; a virtio-scsi one may not until rescanned)."`
	IgnoreVolumeAZ           bool   `json:"ignore-volume-az" doc:"CSI driver: the Cinder availability zones differ from the Nova ones: a volume's topology is the zone it was asked for (the node's), not its Cinder zone."`
	IgnoreVolumeMicroversion bool   `json:"ignore-volume-microversion" doc:"CSI driver: use no Cinder microversion (for a Cinder older than 3.34): lookups by name list every volume, and in-use volumes cannot be expanded (3.42)."`
	BSVersion                string `json:"bs-version" doc:"The in-tree provider's; ignored."`
	TrustDevicePath          bool   `json:"trust-device-path" doc:"The in-tree provider's; ignored."`
}

// Load balancer algorithms [LoadBalancer] lb-method accepts.
var lbMethods = []string{"ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"}

// Metadata sources [Metadata] search-order accepts.
const (
	MetadataConfigDrive = "configDrive"
	MetadataService     = "metadataService"
)

// MaxNodeVolumeAttachLimit is the most [BlockStorage]
// node-volume-attach-limit may be: cinder-csi-plugin's maximum.
const MaxNodeVolumeAttachLimit = 256

// Validate checks what tags cannot express, merges a clouds.yaml when
// [Global] use-clouds is set (settings in cloud.conf win, as in OCCM), and
// resolves the tenant-* / project-* aliases. config.Load calls it after the
// file and the environment were read without error. No error quotes a
// secret.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.use == UseCSINode:
		errs = append(errs, c.BlockStorage.validate()...)
		errs = append(errs, c.Metadata.validate()...)
		return errors.Join(errs...)
	case c.use == UseCSIController:
		errs = append(errs, c.BlockStorage.validate()...)
	case c.RegionalProviderID:
		errs = append(errs, errors.New("OS_CCM_REGIONAL=true: regional providerIDs (openstack://<region>/<id>) are not supported; "+
			"unset it (Nodes that already carry such providerIDs keep working)"))
	}
	if c.Global.UseClouds {
		files, err := mergeClouds(&c.Global, c.EnvCloudsFile, c.EnvCloud)
		if err != nil {
			errs = append(errs, err)
		}
		c.cloudsFiles = files
	} else if c.Global.CloudsFile != "" || c.Global.Cloud != "" {
		c.notes = append(c.notes, "[Global] clouds-file and cloud are ignored because use-clouds is not true")
	}
	errs = append(errs, c.Global.validate()...)
	errs = append(errs, c.LoadBalancer.validate()...)
	errs = append(errs, c.Networking.validate()...)
	errs = append(errs, c.Metadata.validate()...)
	return errors.Join(errs...)
}

func (g *GlobalSection) validate() []error {
	var errs []error
	for _, alias := range []struct {
		to   *string
		from string
		name string
	}{
		{&g.TenantID, g.ProjectID, "tenant-id and project-id"},
		{&g.TenantName, g.ProjectName, "tenant-name and project-name"},
		{&g.TenantDomainID, g.ProjectDomainID, "tenant-domain-id and project-domain-id"},
		{&g.TenantDomainName, g.ProjectDomainName, "tenant-domain-name and project-domain-name"},
	} {
		switch {
		case alias.from == "":
		case *alias.to == "":
			*alias.to = alias.from
		case *alias.to != alias.from:
			errs = append(errs, fmt.Errorf("[Global] %s are aliases but differ; set one", alias.name))
		}
	}

	switch u, err := url.Parse(g.AuthURL); {
	case g.AuthURL == "":
		errs = append(errs, errors.New("[Global] auth-url: required (the Keystone URL, in the --cloud-config file)"))
	case err != nil:
		errs = append(errs, errors.New("[Global] auth-url: not a valid URL")) // err quotes the URL, which may hold user:password
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		errs = append(errs, fmt.Errorf("[Global] auth-url: %s is not an http(s) URL", cloudapi.RedactURL(u)))
	}
	if g.Region == "" {
		errs = append(errs, errors.New("[Global] region: required (the region of the OpenStack endpoints)"))
	}
	if _, err := EndpointAvailability(g.EndpointType); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, g.validateCredentials()...)
	if (g.CertFile == "") != (g.KeyFile == "") {
		errs = append(errs, errors.New("[Global] cert-file and key-file: set both, or neither"))
	}
	return errs
}

// validateCredentials checks that exactly one way of authenticating is
// complete: an application credential, a trust, or a password.
func (g *GlobalSection) validateCredentials() []error {
	userDomain := g.UserDomainID != "" || g.UserDomainName != "" || g.DomainID != "" || g.DomainName != ""
	projectDomain := g.TenantDomainID != "" || g.TenantDomainName != "" || g.DomainID != "" || g.DomainName != ""
	var errs []error
	switch g.authMethod() {
	case authApplicationCredential:
		switch {
		case g.ApplicationCredentialID == "" && g.ApplicationCredentialName == "":
			errs = append(errs, errors.New("[Global] application-credential-secret: set application-credential-id (or application-credential-name) with it"))
		case g.ApplicationCredentialSecret.IsZero():
			errs = append(errs, errors.New("[Global] application-credential-secret: required with application-credential-id or application-credential-name"))
		case g.ApplicationCredentialID == "" && g.UserID == "" && g.Username == "":
			errs = append(errs, errors.New("[Global] application-credential-name: set user-id, or username with its domain, with it (or use application-credential-id)"))
		case g.ApplicationCredentialID == "" && g.UserID == "" && !userDomain:
			errs = append(errs, errors.New("[Global] application-credential-name: username needs user-domain-name, user-domain-id, domain-name or domain-id"))
		}
	case authTrust:
		if g.TrusteeID == "" && g.UserID == "" {
			errs = append(errs, errors.New("[Global] trust-id: set trustee-id (or user-id) with it"))
		}
		if g.TrusteePassword.IsZero() && g.Password.IsZero() {
			errs = append(errs, errors.New("[Global] trust-id: set trustee-password (or password) with it"))
		}
	case authPassword:
		switch {
		case g.Username == "" && g.UserID == "":
			errs = append(errs, errors.New("[Global] username or user-id: required with password"))
		case g.Password.IsZero():
			errs = append(errs, errors.New("[Global] password: required with username or user-id"))
		case g.UserID == "" && !userDomain:
			errs = append(errs, errors.New("[Global] username: needs user-domain-name, user-domain-id, domain-name or domain-id (or use user-id)"))
		}
		if g.TenantID == "" && g.TenantName != "" && !projectDomain {
			errs = append(errs, errors.New("[Global] tenant-name: needs tenant-domain-name, tenant-domain-id, domain-name or domain-id (or use tenant-id)"))
		}
	default:
		errs = append(errs, errors.New("[Global] credentials: set username (or user-id) and password, "+
			"or application-credential-id (or -name) and application-credential-secret"))
	}
	return errs
}

// How [Global] authenticates.
type authMethod int

const (
	authNone authMethod = iota
	authPassword
	authApplicationCredential
	authTrust
)

func (g *GlobalSection) authMethod() authMethod {
	switch {
	case g.ApplicationCredentialID != "" || g.ApplicationCredentialName != "" || !g.ApplicationCredentialSecret.IsZero():
		return authApplicationCredential
	case g.TrustID != "":
		return authTrust
	case !g.Password.IsZero() || g.Username != "" || g.UserID != "":
		return authPassword
	}
	return authNone
}

// credentialKeys names the settings of g's authentication method, for an
// "authentication failed" message.
func (g *GlobalSection) credentialKeys() string {
	switch g.authMethod() {
	case authApplicationCredential:
		if g.ApplicationCredentialID != "" {
			return "[Global] application-credential-id and application-credential-secret"
		}
		return "[Global] application-credential-name, application-credential-secret and the user settings"
	case authTrust:
		return "[Global] trust-id, trustee-id and trustee-password (or user-id and password)"
	}
	user := "username"
	if g.UserID != "" {
		user = "user-id"
	}
	return "[Global] " + user + " and password (and the user's domain and the project)"
}

// validate checks [BlockStorage] for the CSI driver: cinder-csi-plugin
// takes any node-volume-attach-limit and reports 256 for one out of
// range; here it is an error, so a typo cannot silently change how many
// volumes the scheduler puts on a node.
func (b *BlockStorageSection) validate() []error {
	if b.NodeVolumeAttachLimit < 0 || b.NodeVolumeAttachLimit > MaxNodeVolumeAttachLimit {
		return []error{fmt.Errorf("[BlockStorage] node-volume-attach-limit: %d is not between 0 and %d", b.NodeVolumeAttachLimit, MaxNodeVolumeAttachLimit)}
	}
	return nil
}

func (l *LoadBalancerSection) validate() []error {
	var errs []error
	if l.LBVersion != "" && l.LBVersion != "v2" {
		errs = append(errs, fmt.Errorf("[LoadBalancer] lb-version: %q is not supported; only v2 is", l.LBVersion))
	}
	if m := strings.ToUpper(l.LBMethod); slices.Contains(lbMethods, m) {
		l.LBMethod = m
	} else {
		errs = append(errs, fmt.Errorf("[LoadBalancer] lb-method: %q is not one of %s", l.LBMethod, strings.Join(lbMethods, ", ")))
	}
	if l.MonitorDelay <= 0 {
		errs = append(errs, fmt.Errorf("[LoadBalancer] monitor-delay: must be positive, got %s", l.MonitorDelay))
	}
	if l.MonitorTimeout <= 0 {
		errs = append(errs, fmt.Errorf("[LoadBalancer] monitor-timeout: must be positive, got %s", l.MonitorTimeout))
	} else if l.MonitorDelay > 0 && l.MonitorTimeout > l.MonitorDelay {
		errs = append(errs, fmt.Errorf("[LoadBalancer] monitor-timeout: %s is longer than monitor-delay %s", l.MonitorTimeout, l.MonitorDelay))
	}
	if l.MonitorMaxRetries < 1 || l.MonitorMaxRetries > 10 {
		errs = append(errs, fmt.Errorf("[LoadBalancer] monitor-max-retries: %d is not between 1 and 10", l.MonitorMaxRetries))
	}
	if l.MonitorMaxRetriesDown < 1 || l.MonitorMaxRetriesDown > 10 {
		errs = append(errs, fmt.Errorf("[LoadBalancer] monitor-max-retries-down: %d is not between 1 and 10", l.MonitorMaxRetriesDown))
	}
	if l.MaxSharedLB < 1 {
		errs = append(errs, fmt.Errorf("[LoadBalancer] max-shared-lb: must be at least 1, got %d", l.MaxSharedLB))
	}
	if l.ContainerStore != "barbican" && l.ContainerStore != "external" {
		errs = append(errs, fmt.Errorf("[LoadBalancer] container-store: %q is not barbican or external", l.ContainerStore))
	}
	if l.FloatingSubnetID != "" && l.FloatingSubnet != "" {
		errs = append(errs, errors.New("[LoadBalancer] floating-subnet-id and floating-subnet: set one"))
	}
	for item := range strings.SplitSeq(l.NodeSelector, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if k, _, _ := strings.Cut(item, "="); strings.TrimSpace(k) == "" {
			errs = append(errs, fmt.Errorf("[LoadBalancer] node-selector: %q has no label key", item))
		}
	}
	return errs
}

func (n *NetworkingSection) validate() []error {
	if _, err := ParseSortOrder(n.AddressSortOrder); err != nil {
		return []error{err}
	}
	return nil
}

// ParseSortOrder parses [Networking] address-sort-order. OCCM skips a bad
// CIDR with a warning; here it is an error, so a typo cannot silently change
// a Node's IP.
func ParseSortOrder(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return nil, fmt.Errorf("[Networking] address-sort-order: %q is not a CIDR", item)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (m *MetadataSection) validate() []error {
	var errs []error
	items := strings.Split(m.SearchOrder, ",")
	seen := map[string]bool{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		switch {
		case item != MetadataConfigDrive && item != MetadataService:
			errs = append(errs, fmt.Errorf("[Metadata] search-order: %q is not %s or %s", item, MetadataConfigDrive, MetadataService))
		case seen[item]:
			errs = append(errs, fmt.Errorf("[Metadata] search-order: %s is listed twice", item))
		}
		seen[item] = true
	}
	if m.RequestTimeout < 0 {
		errs = append(errs, fmt.Errorf("[Metadata] request-timeout: must not be negative, got %s", m.RequestTimeout))
	}
	return errs
}
