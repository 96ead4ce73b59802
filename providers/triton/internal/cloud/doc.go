// Package cloud is what the Triton CCM (package triton) and the Triton
// CSI driver (package csidriver) both need to talk to CloudAPI: the
// credentials' settings (TRITON_* and their SDC_* names), the account key
// in every form CloudAPI takes and the HTTP Signature signer over it,
// Connect, which builds the triton-go clients on the caller's
// *http.Client and learns the account and datacenter, and the reading of
// CloudAPI's errors.
//
// It is a package of its own so that each binary carries only its own
// job: the driver imports this package, not the CCM's, and so links
// neither k8s.io/cloud-provider nor the CCM framework; the CCM links
// neither the CSI spec, gRPC's server nor mount-utils. It imports no
// framework package but cloudapi and config, and holds only what both
// use.
package cloud
