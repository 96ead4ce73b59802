//go:build floor_triton

// The framework and the triton provider: what
// cmd/triton-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
	_ "github.com/ccmkit/ccmkit/providers/triton"
)
