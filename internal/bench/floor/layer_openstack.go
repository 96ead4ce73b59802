//go:build floor_openstack

// The framework and the openstack provider: what
// cmd/openstack-cloud-controller-manager links.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
	_ "github.com/ccmkit/ccmkit/providers/openstack"
)
