// Package openstack is the ccmkit provider for OpenStack: a drop-in
// replacement for the OpenStack cloud-controller-manager (OCCM,
// kubernetes/cloud-provider-openstack) that reads the same cloud.conf and
// writes the same providerIDs, on gophercloud/v2.
//
// A binary is one line:
//
//	func main() { framework.Main(openstack.New()) }
//
// # Files
//
//	doc.go         this overview
//	provider.go    New, Name, Init and the capability methods
//	config.go      settings: OCCM's cloud.conf sections (Config), and
//	               the cloud-config Secret
//	client.go      the framework's HTTP client with the [Global] TLS
//	               settings
//	instances.go   framework.Instances: Nova servers as Nodes see them
//	addresses.go   a server's Node addresses, by [Networking]
//	loadbalancer.go the Octavia driver of the framework's LB pipeline:
//	               validation and lookups; lb_apply.go its create,
//	               update and delete; lb_list.go the shared list of load
//	               balancers, lb_known.go what it knows of each between
//	               syncs
//	lb_*.go        its annotations, desired state, diff, members,
//	               Octavia calls and answers, floating-IP and node
//	               security group calls
//	routes.go      cloudprovider.Routes: Neutron router extra routes and
//	               the nodes' allowed address pairs
//
// What the CCM shares with the Cinder CSI driver (package csidriver) is
// package internal/cloud: cloud.conf (Config and its sections, their
// checks, the INI format, [Global] use-clouds with a clouds.yaml),
// Keystone authentication over the caller's HTTP client, following
// rotated credentials and backing off in a 401 storm, the [Global] TLS
// settings, error classification (what a not-found is) and paginated
// lists decoded straight into their types.
//
// # Configuration
//
// The file named by --cloud-config, in OCCM's format (see Config):
//
//	[Global]
//	auth-url = https://keystone.example.com:5000/v3
//	region = RegionOne
//	application-credential-id = 4f3c...
//	application-credential-secret = ...
//
// Password credentials (username or user-id, password, the user's domain,
// tenant-id or tenant-name with its domain), application credentials (ID,
// or name with the user) and trusts work as in OCCM, as do
// os-endpoint-type, ca-file, cert-file/key-file, tls-insecure and
// use-clouds with a clouds.yaml. [LoadBalancer], [LoadBalancerClass "x"],
// [Networking], [Route] and [Metadata] are read and checked. Unknown
// sections and keys and bad values are reported all at once, naming the
// section, key and line. OCCM reads no OS_* credentials from the
// environment, and neither does this provider; only OS_CLOUD and
// OS_CLIENT_CONFIG_FILE (for use-clouds) are read.
//
// The settings are read once, at start-up, but for the [Global]
// credentials (user, password, application credential, trust; see
// cloud.ConfWatch): each Keystone token, requested again whenever an
// API answers 401 (the token expired, or Keystone revoked it because the
// password changed), uses the credentials cloud.conf (and with use-clouds
// its clouds.yaml and secure.yaml) holds at that moment. The file is
// stat'ed per token request and parsed again only when its content
// changed, so a rotated cloud-config Secret, which the kubelet writes
// over the mounted file, takes effect without a restart. A file that no
// longer parses or lacks credentials leaves the credentials in use, with
// an error in the log and in the next failed call; a change to another
// setting is logged as taking a restart.
//
// # Instances
//
// The providerID is "openstack:///<server ID>" ("openstack://<region>/<id>"
// is accepted too). A Node without one is matched to the server with its
// exact (or lower-cased) name. Addresses come from Nova: fixed addresses
// are InternalIPs, floating addresses and access IPs ExternalIPs, with
// [Networking] internal-network-name, public-network-name,
// ipv6-support-disabled and address-sort-order as in OCCM, in Nova's
// interface order. The instance type is the flavor name, the zone the
// server's availability zone made a valid label value, the region
// [Global] region. A server is shut down when its status is SHUTOFF, and
// gone only when Nova answers 404 for it.
//
// # Load balancers
//
// Octavia load balancers named kube_service_<cluster>_<namespace>_<name>,
// configured by [LoadBalancer] (and [LoadBalancerClass "x"]) and OCCM's
// loadbalancer.openstack.org/ annotations (docs/openstack/annotations.md).
// Changes are granular: only the listeners, pools, members and monitors
// that differ are written, one Octavia write per sync because Octavia
// refuses the next one (409) while the load balancer is PENDING_UPDATE.
// Lookups are served from one shared list of the project's load balancers
// (framework.LoadBalancerLister), and the driver keeps what it read or
// wrote of each (children, a digest of each pool's members, the floating
// IP) while Octavia's updated_at shows no other change: a sync with
// nothing to change, or one that polls a change being applied, reads
// nothing of its own, and a node joining or leaving costs one batch
// member update per pool.
// With [LoadBalancer] manage-security-groups, each Service also gets a
// Neutron security group, lb-sg-<uid>-<namespace>-<name> as OCCM names
// it, that opens its NodePorts (and health check node port) to the
// member subnet, on the ports of its member nodes. Up to [LoadBalancer]
// max-shared-lb Services share one load balancer (the same
// load-balancer-id), each with its own listeners, tagged with its name, as
// OCCM shares them (lb_shared.go).
//
// # Routes
//
// With [Route] router-id, each Node's pod CIDR is an extra route of that
// router to the node's address, and an allowed address pair on its port.
//
// # Volumes (CSI)
//
// The Cinder CSI driver is package csidriver, apart from this one so that
// each binary carries only its own job: it reads the same cloud.conf,
// whose [BlockStorage] section the CCM accepts and leaves to it.
package openstack
