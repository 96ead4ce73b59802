// Package brightbox is the Brightbox Cloud provider: a drop-in replacement
// for brightbox/brightbox-cloud-controller-manager, configured by the same
// environment variables (see Config), writing the same providerIDs
// (brightbox://srv-xxxxx) and adopting the load balancers it made.
//
// It talks to the Brightbox API 1.0 with gobrightbox/v2 over the
// framework's HTTP client, OAuth2 token requests included (client.go).
// Instances are servers, served from the framework's instance cache: one
// GET /1.0/servers per cache TTL however many Nodes (instances.go); a
// Node's zone is the server's zone handle, its region the handle's prefix
// (region.go), and its addresses tell the private IPv4 (InternalIP) from
// IPv6 and cloud IPs (ExternalIP), unless BRIGHTBOX_LEGACY_ADDRESSES asks
// for the existing CCM's all-ExternalIP list (addresses.go).
//
// Each LoadBalancer Service gets a Brightbox load balancer and a cloud IP
// named <service>.<namespace>.<cluster>, as the existing CCM names them
// (loadbalancer.go, lb_cloudip.go); their nodes are in one server group
// the load balancers share, whose firewall policy opens each one's node
// ports (lb_shared.go, lb_firewall.go). Neither the load balancers nor
// the server groups are listed, whose lists embed every node once per
// load balancer: a load balancer is found through its cloud IP.
//
// NewCSI is the framework/csi provider of Brightbox's network block
// storage volumes, csi.brightbox.com (csi*.go), the first CSI driver for
// Brightbox: the controller takes the CCM's credentials (CSIConfig, the
// same variables) and creates, attaches, detaches, grows and destroys
// volumes without waiting on the API; the node plugin reads its server ID
// from the metadata service and finds a volume at
// /dev/disk/by-id/virtio-<serial>. It reports no topology and offers no
// snapshots, for want of either in gobrightbox v2.2.2 (see csi.go and
// CSITopologyKey). A binary is:
//
//	p := brightbox.NewCSI()
//	csi.Main(p, p.CommandOptions()...)
//
// Package gbsim simulates the API for tests, demos and benchmarks.
package brightbox
