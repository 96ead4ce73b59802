// Command triton-csi-driver is the CSI driver for Triton's NFS shared
// volumes (RFD 26, type tritonnfs), tritonnfs.csi.joyent.com: the
// controller takes the Triton CCM's credentials from the environment, the
// node plugin its instance UUID and fabric network from the instance
// metadata (mdata-get), and mounts the volumes over NFS. See package
// github.com/ccmkit/ccmkit/providers/triton/csidriver.
package main

import (
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
)

func main() {
	p := csidriver.New()
	csi.Main(p, p.CommandOptions()...)
}
