// Command digitalocean-csi-driver is the CSI driver for DigitalOcean Block
// Storage, a drop-in replacement for digitalocean/csi-digitalocean: the
// driver name dobs.csi.digitalocean.com, its topology key, publish
// context and device paths, the token Secret and its flags. See
// package github.com/ccmkit/ccmkit/providers/digitalocean/csidriver.
package main

import (
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
)

func main() {
	p := csidriver.New()
	csi.Main(p, p.CommandOptions()...)
}
