// Package cloud is what the OpenStack cloud-controller-manager (package
// openstack) and the Cinder CSI driver (package csidriver) both need: the
// cloud.conf they both read (Config and its sections, their checks, the
// INI format, [Global] use-clouds with a clouds.yaml), Keystone
// authentication over the caller's *http.Client that follows rotated
// credentials in the --cloud-config file (Authenticate, ConfWatch) and
// backs off in a 401 storm, the [Global] TLS settings, the rules every
// call follows (only an API's own 404 for one named resource is a
// not-found: IsAPINotFound; ServiceError), paginated lists decoded
// straight into their types (EachPage, ListAll), and the zone label
// value both report (SanitizeLabelValue).
//
// It is a package of its own so that each binary carries only its own job:
// the CSI driver, whose node plugin runs on every node, does not link the
// CCM framework and k8s.io/cloud-provider, and the CCM does not link the
// CSI spec, gRPC and mount code. It imports neither package framework nor
// framework/csi: what it needs of them comes in as a plain value (an
// *http.Client, a clock).
//
// Config is the CCM's exported openstack.Config (a type alias), so its
// helpers here are functions (ConfigFor, Notes) rather than methods: the
// CCM package's API stays what it was.
//
// # Files
//
//	doc.go        this overview
//	config.go     Config: OCCM's cloud.conf sections, checked
//	ini.go        the INI format of cloud.conf (gcfg's scanner)
//	clouds.go     [Global] use-clouds: merging a clouds.yaml
//	client.go     TLS settings, the Keystone request, error
//	              classification, the cheapest Nova call
//	auth.go       Keystone tokens: the first at Init, a new one on a
//	              401, with the credentials cloud.conf holds then
//	confwatch.go  following cloud.conf for rotated credentials
//	reauth.go     the backoff of token requests in a 401 storm
//	pages.go      paginated lists decoded straight into their types
//	labels.go     zones as label values
package cloud
