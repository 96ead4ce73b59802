//go:build floor_brightbox

// The framework and the brightbox provider: what
// cmd/brightbox-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
	_ "github.com/ccmkit/ccmkit/providers/brightbox"
)
