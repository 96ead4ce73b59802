// Command skeleton-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for Skeleton Cloud, the template provider in
// examples/skeleton. Every cloud's binary looks like this one.
package main

import (
	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/framework"
)

func main() { framework.Main(skeleton.New()) }
