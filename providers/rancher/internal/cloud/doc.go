// Package cloud is the Cattle API client that both Rancher binaries use:
// the cloud-controller-manager (package providers/rancher) and the CSI
// driver (package providers/rancher/csidriver). It connects with the
// CATTLE_* settings and checks the API is an environment's (Connect),
// speaks the API as go-rancher's base client does but through the
// caller's *http.Client with each call's context (cattle.go), and holds
// the rules every call follows: Cattle's own 404 for one resource is the
// only not-found (ByID, API.NotFound), a list is every page or an error
// (ListAll, GetLink), a malformed answer is an error, never a panic.
//
// It is a package of its own so that each binary carries only its own
// job: it imports neither the CCM framework (github.com/ccmkit/ccmkit/
// framework, which links k8s.io/cloud-provider) nor framework/csi (gRPC,
// the CSI spec, mount-utils); the caller hands it its HTTP client and its
// framework's not-found sentinel.
package cloud
