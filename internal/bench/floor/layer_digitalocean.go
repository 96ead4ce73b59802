//go:build floor_digitalocean

// The framework and the digitalocean provider: what
// cmd/digitalocean-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
	_ "github.com/ccmkit/ccmkit/providers/digitalocean"
)
