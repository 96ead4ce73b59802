// Command brightbox-csi-driver is the CSI driver for Brightbox Cloud block
// storage volumes, csi.brightbox.com: the controller takes the Brightbox
// CCM's credentials from the environment, the node plugin its server ID
// from the metadata service. See package
// github.com/ccmkit/ccmkit/providers/brightbox/csidriver.
package main

import (
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
)

func main() {
	p := csidriver.New()
	csi.Main(p, p.CommandOptions()...)
}
