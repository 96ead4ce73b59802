// Package rancher is the Rancher 1.x (Cattle) provider: Nodes from Cattle
// hosts, and load balancers for Services of type LoadBalancer as Cattle
// loadBalancerServices (HAProxy) in the kubernetes-loadbalancers stack, each
// backed by one externalService holding the target nodes' IPs. It is a
// drop-in replacement for rancher/rancher-cloud-controller-manager: the same
// CATTLE_* variables, the same providerID scheme and the same stack and
// load-balancer names, so an existing installation is adopted. It talks to
// the Cattle API v2-beta through go-rancher's v2 client;
// providers/rancher/ranchersim simulates that API for its tests.
package rancher
