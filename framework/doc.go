// Package framework turns a small provider value into a complete Kubernetes
// cloud-controller-manager.
//
// A cloud plugs in by implementing Provider (a name and an Init method) plus
// any of the optional capabilities the framework discovers by type assertion,
// the way database/sql discovers driver features:
//
//   - Configurable: a config struct the framework fills from --cloud-config and
//     the environment before Init (see package config);
//   - InstancesProvider: look instances up by ID, by name, or list them; the
//     framework implements cloudprovider.InstancesV2 on top, with a shared
//     instance cache and strict not-found semantics;
//   - LoadBalancerProvider: usually built with NewLoadBalancer from a
//     LoadBalancerDriver, which gives every cloud the same pipeline (annotation
//     decoding, find-or-create, change-only updates, retry while provisioning,
//     status and Events);
//   - RoutesProvider: cloudprovider.Routes as is;
//   - ControllersProvider: extra control loops that obey --controllers and
//     leader election.
//
// A binary is one line:
//
//	func main() { framework.Main(skeleton.New()) }
//
// Main builds the standard cloud-controller-manager command from
// k8s.io/cloud-provider/app: every upstream flag, leader election, secure
// serving with /healthz and /metrics, JSON logging, and defaults tuned for
// large clusters.
package framework
