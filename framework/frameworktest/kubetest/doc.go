// Package kubetest runs a real Kubernetes control plane and simulated
// kubelets for the tests of a cloud-controller-manager:
//
//   - StartControlPlane, a real kube-apiserver and etcd (built into bin/ by
//     `make controlplane`) on loopback with RBAC, an admin kubeconfig and a
//     kubeconfig for the CCM's ServiceAccount holding only the RBAC you ship;
//   - StartKubelet and RegisterNodes, which register Nodes as a kubelet with
//     --cloud-provider=external does and heartbeat them, with NotReady to
//     exercise the node-lifecycle controller.
//
// It is apart from package frameworktest because it runs processes through
// controller-runtime's envtest: the simulated clouds, which import
// frameworktest for its contract, stay free of that weight.
package kubetest
