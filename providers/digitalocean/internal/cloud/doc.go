// Package cloud is what the DigitalOcean cloud-controller-manager
// (package digitalocean) and the DigitalOcean CSI driver (package
// csidriver) both need of the API: the godo client over a framework HTTP
// client with the token added per request, the one rule for "not found",
// the paged lists, the access and region checks, and the droplet metadata
// service.
//
// It is a package of its own so that each binary carries only its own job:
// the CSI driver, whose node plugin runs on every node, does not link the
// CCM framework and k8s.io/cloud-provider, and the CCM does not link the
// CSI spec, gRPC and mount code. It imports neither package framework
// nor framework/csi: what it needs of them comes in as a plain value (an
// *http.Client, a token function).
package cloud
