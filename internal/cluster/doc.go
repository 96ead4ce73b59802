// Package cluster runs a local cluster for the end-to-end suite, `make
// demo` and `make bench`: a real kube-apiserver and etcd (from bin/), a
// provider's simulated cloud, kubelet stand-ins registering Nodes, and the
// provider's real CCM binary as a subprocess with the least-privilege RBAC
// the project ships.
//
// Every provider that joins the end-to-end suite adds one entry to
// Providers.
package cluster
