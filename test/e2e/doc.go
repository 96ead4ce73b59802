// Package e2e is the end-to-end suite: for every provider in
// internal/cluster.Providers it runs the real CCM binary from cmd/ as a
// subprocess, with only the RBAC the project ships, against a real
// kube-apiserver and etcd and the provider's simulated cloud, and asserts the
// end state in both.
//
// It needs bin/kube-apiserver and bin/etcd (`make controlplane`); without them
// the tests skip, unless CCMKIT_E2E=required (set by `make test`) makes that a
// failure. Run one scenario with, for example:
//
//	go test ./test/e2e -run 'TestE2E/skeleton/NodeInitialization' -v
package e2e
