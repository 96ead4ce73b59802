// Package digitalocean is the ccmkit provider for DigitalOcean: a drop-in
// replacement for digitalocean/digitalocean-cloud-controller-manager that
// reads the same environment variables and writes the same providerIDs, on
// the official godo client.
//
// A binary is one line:
//
//	func main() { framework.Main(digitalocean.New()) }
//
// # Files
//
//	doc.go         this overview
//	provider.go    New, Name, Init and the capability methods
//	config.go      settings: the existing CCM's environment variables
//	client.go      the godo client for the CCM's settings, droplet listing
//	region.go      where the region comes from when REGION is unset
//	instances.go   framework.Instances: droplets as Nodes see them
//	internal/cloud what the CCM and the CSI driver share: the godo client
//	               over the framework's HTTP client, token per request,
//	               error classification, paged lists, the region checks
//	               and the droplet metadata service
//	csidriver/     the CSI driver (cmd/digitalocean-csi-driver), a package
//	               of its own so that each binary carries only its own job
//	dosim/         the simulated DigitalOcean API
//
// # Configuration
//
// Environment only, as in the existing CCM (keys in --cloud-config work
// too, see Config):
//
//	DO_ACCESS_TOKEN              required; or DO_ACCESS_TOKEN_FILE, re-read when it changes
//	DO_OVERRIDE_URL              API base URL (default https://api.digitalocean.com/)
//	DO_CLUSTER_ID                cluster ID; load balancers are tagged k8s:<id>
//	DO_CLUSTER_VPC_ID            VPC of new load balancers
//	REGION                       region slug; else the droplet metadata service
//	DO_API_RATE_LIMIT_QPS        API requests per second (default 0, unlimited);
//	                             --cloud-api-qps wins when set
//	DEFAULT_LB_TYPE              REGIONAL or REGIONAL_NETWORK (default)
//	PUBLIC_ACCESS_FIREWALL_NAME  the public-access firewall's name
//	PUBLIC_ACCESS_FIREWALL_TAGS  droplet tags the firewall applies to (comma-separated)
//
// # Instances
//
// The providerID is "digitalocean://<droplet ID>" ("digitalocean:///<id>"
// is accepted too). A Node without one is matched to the droplet with its
// exact name or, failing that, with its name as the droplet's private IPv4,
// public IPv4 or public IPv6. Addresses: InternalIP is the private IPv4,
// ExternalIP the public IPv4 and IPv6, Hostname the droplet name. The
// instance type is the size slug and the region the region slug;
// DigitalOcean has no zones. A droplet is shut down when its status is
// "off", and gone only when the API answers 404 for it.
package digitalocean
