// Command brightbox-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for Brightbox Cloud, a drop-in replacement for
// brightbox/brightbox-cloud-controller-manager: the same environment
// variables (BRIGHTBOX_CLIENT, BRIGHTBOX_CLIENT_SECRET, ...), providerIDs
// and Service annotations. See package
// github.com/ccmkit/ccmkit/providers/brightbox.
package main

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/brightbox"
)

func main() { framework.Main(brightbox.New()) }
