// Package brightbox is the Brightbox Cloud provider: a drop-in replacement
// for brightbox/brightbox-cloud-controller-manager, configured by the same
// environment variables (see Config), writing the same providerIDs
// (brightbox://srv-xxxxx) and adopting the load balancers it made.
//
// It talks to the Brightbox API 1.0 with gobrightbox/v2 over the
// framework's HTTP client, OAuth2 token requests included (client.go,
// internal/cloud). Instances are servers, served from the framework's
// instance cache: one GET /1.0/servers per cache TTL however many Nodes
// (instances.go); a Node's zone is the server's zone handle, its region
// the handle's prefix (region.go), and its addresses tell the private
// IPv4 (InternalIP) from IPv6 and cloud IPs (ExternalIP), unless
// BRIGHTBOX_LEGACY_ADDRESSES asks for the existing CCM's all-ExternalIP
// list (addresses.go).
//
// Each LoadBalancer Service gets a Brightbox load balancer and a cloud IP
// named <service>.<namespace>.<cluster>, as the existing CCM names them
// (loadbalancer.go, lb_cloudip.go); their nodes are in one server group
// the load balancers share, whose firewall policy opens each one's node
// ports (lb_shared.go, lb_firewall.go). Neither the load balancers nor
// the server groups are listed, whose lists embed every node once per
// load balancer: a load balancer is found through its cloud IP.
//
// The CSI driver for Brightbox's network block storage volumes,
// csi.brightbox.com, is package csidriver, apart from this one so that
// each binary carries only its own job: the CCM links no CSI code, the
// driver (whose node plugin runs on every node) none of
// k8s.io/cloud-provider. What both need, the API client and its rules
// (credentials and token, the authoritative not-found), is
// internal/cloud.
//
// Package gbsim simulates the API for tests, demos and benchmarks.
package brightbox
