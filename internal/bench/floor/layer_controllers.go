//go:build floor_controllers

// The k8s.io/cloud-provider controllers a CCM runs: node, node lifecycle,
// service and route.

package main

import (
	_ "k8s.io/cloud-provider/controllers/node"
	_ "k8s.io/cloud-provider/controllers/nodelifecycle"
	_ "k8s.io/cloud-provider/controllers/route"
	_ "k8s.io/cloud-provider/controllers/service"
)
