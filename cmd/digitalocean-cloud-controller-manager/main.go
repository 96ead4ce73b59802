// Command digitalocean-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for DigitalOcean, a drop-in replacement for
// digitalocean/digitalocean-cloud-controller-manager: the same environment
// variables (DO_ACCESS_TOKEN, REGION, ...), providerIDs and Service
// annotations. See package github.com/ccmkit/ccmkit/providers/digitalocean.
package main

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
)

func main() { framework.Main(digitalocean.New()) }
