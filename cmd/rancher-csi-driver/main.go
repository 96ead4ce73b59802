// Command rancher-csi-driver is the CSI driver for Rancher 1.x (Cattle)
// volumes, cattle.csi.rancher.com: the controller creates and removes
// Cattle volumes with the Rancher CCM's settings from the environment;
// the node plugin has its host's Docker volume plugin of the volume's
// storage driver mount it, and bind-mounts it. See package
// github.com/ccmkit/ccmkit/providers/rancher/csidriver.
package main

import (
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/rancher/csidriver"
)

func main() {
	p := csidriver.New()
	csi.Main(p, p.CommandOptions()...)
}
