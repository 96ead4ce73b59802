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
// Package gbsim simulates the API for tests, demos and benchmarks.
package brightbox
