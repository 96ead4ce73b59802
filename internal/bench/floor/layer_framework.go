//go:build floor_framework

// ccmkit's framework on top of k8s.io/cloud-provider/app.

package main

import (
	_ "github.com/ccmkit/ccmkit/framework"
)
