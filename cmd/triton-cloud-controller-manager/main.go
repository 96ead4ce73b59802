// Command triton-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for Triton DataCenter (Joyent's public cloud and
// private installs): Nodes from CloudAPI machines, load balancers from
// Triton Moirai appliances or CNS names. It reads triton-go's environment
// variables (TRITON_URL, TRITON_ACCOUNT, TRITON_KEY_ID,
// TRITON_KEY_MATERIAL, ...). See package
// github.com/ccmkit/ccmkit/providers/triton.
package main

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/triton"
)

func main() { framework.Main(triton.New()) }
