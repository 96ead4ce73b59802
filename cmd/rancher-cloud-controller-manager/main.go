// Command rancher-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for Rancher 1.x (Cattle) environments, a drop-in
// replacement for rancher/rancher-cloud-controller-manager: the same
// environment variables (CATTLE_URL, CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY),
// providerIDs (rancher://<host uuid>) and load-balancer stack. See package
// github.com/ccmkit/ccmkit/providers/rancher.
package main

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher"
)

func main() { framework.Main(rancher.New()) }
