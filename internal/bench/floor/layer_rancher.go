//go:build floor_rancher

// The framework and the rancher provider: what
// cmd/rancher-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
	_ "github.com/ccmkit/ccmkit/providers/rancher"
)
