//go:build floor_skeleton

// The framework and the skeleton provider: what
// cmd/skeleton-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/examples/skeleton"
	_ "github.com/ccmkit/ccmkit/framework"
)
