package openstacksim

import (
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated OpenStack cloud in YAML (or JSON): what
// it holds when it starts and how it misbehaves. Every field is optional:
//
//	provider: openstack          # "" or "openstack"; cmd/cloudsim picks the simulator by it
//	description: three nodes, one old LB
//	region: RegionOne
//	users:                       # default: ccm / ccm-secret, domain Default, project kubernetes
//	- {name: admin, password: pw, domain: Default, project: admin}
//	applicationCredentials:
//	- {id: ac-1, secret: s3cret, user: admin}
//	tokenTTL: 1h                 # default 24h
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	maxLimit: 100                # Nova/Octavia page cap (default 1000)
//	provisioningReads: 2         # reads until a pending LB settles; -1: at once
//	maxRoutes: 30
//	octaviaMinor: 27             # newest Octavia API version advertised (v2.27)
//	disabledExtensions: [extraroute-atomic]
//	noDefaults: false            # true: no private/public networks, router1, default SG
//	networks:                    # besides the defaults
//	- name: storage
//	  external: false
//	  subnets: [{name: storage-subnet, cidr: 192.168.10.0/24}]
//	routers:
//	- name: router2
//	  gateway: public            # external network name or ID
//	  subnets: [storage-subnet]  # subnet names or IDs to put interfaces on
//	  routes: [{destination: 10.244.0.0/24, nexthop: 192.168.10.5}]
//	servers:
//	- name: node-1               # required
//	  id: 5e1c…                  # default: generated
//	  flavor: m1.medium          # default m1.small
//	  image: cirros-0.6.2-x86_64-disk  # name or ID; default the first of Images
//	  az: zone-a                 # default nova
//	  status: SHUTOFF            # default ACTIVE
//	  tags: [k8s]
//	  ports:                     # default: one on the default network
//	  - {network: private, fixedIPs: [10.0.0.11], floatingIP: auto}
//	loadBalancers:               # as if created earlier, e.g. by another CCM
//	- name: kube_service_c_ns_old
//	  subnet: private-subnet     # VIP subnet name or ID; default the default subnet
//	  status: ACTIVE             # provisioning status, default ACTIVE
//	  tags: [kube_service_c_ns_old]
//	  listeners:
//	  - protocol: TCP
//	    port: 80
//	    allowedCIDRs: [10.0.0.0/8]
//	    pool: {protocol: TCP, algorithm: ROUND_ROBIN, memberPort: 30080, members: [node-1]}
//	volumeTypes:                 # Cinder's types, the first the default; default __DEFAULT__, lvmdriver-1, multiattach
//	- {name: ssd, description: fast}
//	- {name: shared, extraSpecs: {multiattach: "<is> True"}}
//	volumeZones: [nova, zone-a]  # Cinder's zones; default nova and every server's zone
//	volumeQuotas: {volumes: 10, snapshots: 10, gigabytes: 1000}  # default 1000, 1000, 100000
//	maxDiskDevices: 26           # Nova's max_disk_devices_to_attach, the root disk included
//	volumes:                     # Cinder volumes, available, or in-use on server
//	- name: pgdata
//	  size: 10                   # GiB, default 1
//	  type: ssd                  # default the default type
//	  az: zone-a
//	  server: node-1             # a server name or ID: attached to it (/dev/vdb, …)
//	  metadata: {app: postgres}
//	faults:                      # see simkit.ScenarioFault; operation "*", an endpoint or a short name
//	- {operation: servers.list, status: 503, rate: 0.1, retryAfter: 2s}
//
// Short operation names: see Operations.
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads and faults.
	simkit.ScenarioHeader
	Region                 string                  `json:"region,omitempty"`
	Users                  []User                  `json:"users,omitempty"`
	ApplicationCredentials []ApplicationCredential `json:"applicationCredentials,omitempty"`
	TokenTTL               string                  `json:"tokenTTL,omitempty"`
	MaxLimit               int                     `json:"maxLimit,omitempty"`
	MaxRoutes              int                     `json:"maxRoutes,omitempty"`
	OctaviaMinor           int                     `json:"octaviaMinor,omitempty"`
	DisabledExtensions     []string                `json:"disabledExtensions,omitempty"`
	NoDefaults             bool                    `json:"noDefaults,omitempty"`
	Networks               []ScenarioNetwork       `json:"networks,omitempty"`
	Routers                []ScenarioRouter        `json:"routers,omitempty"`
	Servers                []ScenarioServer        `json:"servers,omitempty"`
	LoadBalancers          []ScenarioLoadBalancer  `json:"loadBalancers,omitempty"`
	VolumeTypes            []VolumeType            `json:"volumeTypes,omitempty"`
	VolumeZones            []string                `json:"volumeZones,omitempty"`
	VolumeQuotas           VolumeQuotas            `json:"volumeQuotas,omitzero"`
	MaxDiskDevices         int                     `json:"maxDiskDevices,omitempty"`
	Volumes                []ScenarioVolume        `json:"volumes,omitempty"`
}

// ScenarioVolume is a Cinder volume of a Scenario, attached to Server
// (a server name or ID) when it names one.
type ScenarioVolume struct {
	Name     string            `json:"name,omitempty"`
	ID       string            `json:"id,omitempty"`
	Size     int               `json:"size,omitempty"`
	Type     string            `json:"type,omitempty"`
	AZ       string            `json:"az,omitempty"`
	Server   string            `json:"server,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// ScenarioNetwork is a network of a Scenario with its subnets.
type ScenarioNetwork struct {
	Name     string           `json:"name"`
	ID       string           `json:"id,omitempty"`
	External bool             `json:"external,omitempty"`
	Subnets  []ScenarioSubnet `json:"subnets,omitempty"`
}

// ScenarioSubnet is a subnet of a ScenarioNetwork.
type ScenarioSubnet struct {
	Name    string `json:"name,omitempty"`
	ID      string `json:"id,omitempty"`
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway,omitempty"`
}

// ScenarioRouter is a router of a Scenario.
type ScenarioRouter struct {
	Name    string   `json:"name"`
	ID      string   `json:"id,omitempty"`
	Gateway string   `json:"gateway,omitempty"`
	Subnets []string `json:"subnets,omitempty"`
	Routes  []Route  `json:"routes,omitempty"`
}

// ScenarioServer is a server of a Scenario.
type ScenarioServer struct {
	Name     string            `json:"name"`
	ID       string            `json:"id,omitempty"`
	Flavor   string            `json:"flavor,omitempty"`
	Image    string            `json:"image,omitempty"`
	AZ       string            `json:"az,omitempty"`
	Status   string            `json:"status,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Ports    []ScenarioPort    `json:"ports,omitempty"`
}

// ScenarioPort is a network interface of a ScenarioServer.
type ScenarioPort struct {
	Network    string   `json:"network,omitempty"`
	FixedIPs   []string `json:"fixedIPs,omitempty"`
	FloatingIP string   `json:"floatingIP,omitempty"`
}

// ScenarioLoadBalancer is an Octavia load balancer of a Scenario; AddLoadBalancer
// takes one too.
type ScenarioLoadBalancer struct {
	Name      string             `json:"name"`
	Subnet    string             `json:"subnet,omitempty"`
	Status    string             `json:"status,omitempty"`
	Provider  string             `json:"provider,omitempty"`
	Tags      []string           `json:"tags,omitempty"`
	Listeners []ScenarioListener `json:"listeners,omitempty"`
}

// ScenarioListener is a listener with its default pool.
type ScenarioListener struct {
	Protocol     string        `json:"protocol"`
	Port         int           `json:"port"`
	AllowedCIDRs []string      `json:"allowedCIDRs,omitempty"`
	Pool         *ScenarioPool `json:"pool,omitempty"`
}

// ScenarioPool is a listener's default pool; members are server names
// (their first fixed IP) or addresses.
type ScenarioPool struct {
	Protocol   string   `json:"protocol,omitempty"`
	Algorithm  string   `json:"algorithm,omitempty"`
	MemberPort int      `json:"memberPort,omitempty"`
	Members    []string `json:"members,omitempty"`
	Monitor    string   `json:"monitor,omitempty"`
}

// Operations are short names of endpoints, for scenario faults.
var Operations = map[string]string{
	"identity":                  "* " + identityPrefix + "/*",
	"compute":                   "* " + computePrefix + "/*",
	"network":                   "* " + networkPrefix + "/*",
	"loadbalancer":              "* " + lbPrefix + "/*",
	"tokens.create":             "POST " + identityPrefix + "/v3/auth/tokens",
	"servers.list":              "GET " + computeV21 + "/servers/detail",
	"servers.get":               "GET " + computeV21 + "/servers/{id}",
	"flavors.get":               "GET " + computeV21 + "/flavors/{id}",
	"ports.list":                "GET " + networkV2 + "/ports",
	"ports.update":              "PUT " + networkV2 + "/ports/{id}",
	"networks.list":             "GET " + networkV2 + "/networks",
	"routers.get":               "GET " + networkV2 + "/routers/{id}",
	"routers.update":            "PUT " + networkV2 + "/routers/{id}",
	"routers.addExtraRoutes":    "PUT " + networkV2 + "/routers/{id}/add_extraroutes",
	"routers.removeExtraRoutes": "PUT " + networkV2 + "/routers/{id}/remove_extraroutes",
	"floatingips.list":          "GET " + networkV2 + "/floatingips",
	"floatingips.create":        "POST " + networkV2 + "/floatingips",
	"floatingips.update":        "PUT " + networkV2 + "/floatingips/{id}",
	"loadbalancers.list":        "GET " + lbaas + "/loadbalancers",
	"loadbalancers.create":      "POST " + lbaas + "/loadbalancers",
	"loadbalancers.get":         "GET " + lbaas + "/loadbalancers/{id}",
	"loadbalancers.update":      "PUT " + lbaas + "/loadbalancers/{id}",
	"loadbalancers.delete":      "DELETE " + lbaas + "/loadbalancers/{id}",
	"listeners.create":          "POST " + lbaas + "/listeners",
	"listeners.update":          "PUT " + lbaas + "/listeners/{id}",
	"pools.create":              "POST " + lbaas + "/pools",
	"members.batchUpdate":       "PUT " + lbaas + "/pools/{id}/members",
	"healthmonitors.create":     "POST " + lbaas + "/healthmonitors",
	"volume":                    "* " + volumePrefix + "/*",
	"volumes.create":            "POST " + volumeProject + "/volumes",
	"volumes.list":              "GET " + volumeProject + "/volumes/detail",
	"volumes.get":               "GET " + volumeProject + "/volumes/{id}",
	"volumes.delete":            "DELETE " + volumeProject + "/volumes/{id}",
	"volumes.action":            "POST " + volumeProject + "/volumes/{id}/action",
	"snapshots.create":          "POST " + volumeProject + "/snapshots",
	"snapshots.get":             "GET " + volumeProject + "/snapshots/{id}",
	"snapshots.delete":          "DELETE " + volumeProject + "/snapshots/{id}",
	"volumeAttachments.create":  "POST " + computeV21 + "/servers/{id}/os-volume_attachments",
	"volumeAttachments.delete":  "DELETE " + computeV21 + "/servers/{id}/os-volume_attachments/{volume}",
}

// scenarios seeds a Server from a Scenario; the resources are checked by
// seeding a scratch cloud with them.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:     "openstack",
	Operations:   scenarioOperations,
	Check:        (*Scenario).validate,
	New:          New,
	Apply:        (*Scenario).Apply,
	ApplyToCheck: true,
}

// LoadScenario parses a YAML (or JSON) scenario and validates it,
// reporting every problem at once, unknown keys included.
func LoadScenario(data []byte) (*Scenario, error) { return scenarios.Load(data) }

// NewFromScenario returns a Server, not listening yet, seeded from a
// scenario.
func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
	return scenarios.NewServer(data, defaults...)
}

// Validate reports every problem with sc, as LoadScenario does.
func (sc *Scenario) Validate() error { return scenarios.Validate(sc) }

// Options returns the server options sc asks for. sc must be valid.
func (sc *Scenario) Options() Options {
	ttl, _ := simkit.ParseDuration(sc.TokenTTL)
	return Options{
		Common: sc.Common(scenarioOperations), Region: sc.Region, Users: slices.Clone(sc.Users),
		ApplicationCredentials: slices.Clone(sc.ApplicationCredentials), TokenTTL: ttl, MaxLimit: sc.MaxLimit,
		ProvisioningReads: sc.ProvisioningReads, MaxRoutes: sc.MaxRoutes, OctaviaMinor: sc.OctaviaMinor,
		DisabledExtensions: sc.DisabledExtensions, NoDefaults: sc.NoDefaults,
		VolumeTypes: slices.Clone(sc.VolumeTypes), VolumeZones: slices.Clone(sc.VolumeZones),
		VolumeQuotas: sc.VolumeQuotas, MaxDiskDevices: sc.MaxDiskDevices,
	}
}

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint (or prefix pattern) as Fault.Op takes it.
var scenarioOperations = simkit.Operations{Names: Operations, IsEndpoint: func(op string) bool {
	return strings.Contains(op, "/") && strings.Contains(op, " ")
}}
