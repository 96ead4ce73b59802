// Package rancher is the Rancher 1.x (Cattle) provider: Nodes from Cattle
// hosts, and load balancers for Services of type LoadBalancer as Cattle
// loadBalancerServices (HAProxy) in the kubernetes-loadbalancers stack, each
// backed by one externalService holding the target nodes' IPs. It is a
// drop-in replacement for rancher/rancher-cloud-controller-manager: the same
// CATTLE_* variables, the same providerID scheme and the same stack and
// load-balancer names, so an existing installation is adopted. It talks to
// the Cattle API v2-beta through go-rancher's v2 client;
// providers/rancher/ranchersim simulates that API for its tests.
//
// Nodes (instances.go, addresses.go, region.go):
//
//   - the providerID is rancher://<host uuid>, the existing CCM's
//     InstanceID; a Node without one is matched by hostname as the
//     existing CCM matched it (case-insensitive, short name against FQDN);
//   - a Node's host is gone only when Cattle lists it removed or purged,
//     or no longer lists it; it is shut down when inactive or disconnected;
//   - the InternalIP is the host's agentIpAddress; the host's other IPs
//     are InternalIPs when private and ExternalIPs when public, and the
//     io.rancher.host.external_dns_ip label adds ExternalIPs;
//   - zone, region and instance type come from host labels (the
//     Kubernetes well-known keys by default), else from the machine
//     driver's configuration, else none (and the type "rancher");
//   - all Nodes are served from one paginated host list per cache TTL,
//     and each host's ipAddresses link is read at most once per TTL.
//
// Volumes are the CSI driver's, package providers/rancher/csidriver
// (cattle.csi.rancher.com, binary rancher-csi-driver): a package of its
// own, so that each binary carries only its own job. Both take the
// CATTLE_* settings and speak the Cattle API through
// providers/rancher/internal/cloud.
//
// go-rancher gives the Cattle types and the way the API is spoken, but its
// client takes neither an *http.Client nor a context and sends on
// http.DefaultTransport: internal/cloud speaks the API as go-rancher's
// base client does, through the framework's client with each call's
// context, changing nothing process-wide; it also holds the rules every
// call follows (not-found, malformed answers).
package rancher
