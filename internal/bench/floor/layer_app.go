//go:build floor_app

// k8s.io/cloud-provider/app, the upstream command framework.Main builds on:
// every upstream flag, leader election, and the secure port with the API
// server's delegated authentication and authorization (k8s.io/apiserver),
// which bring gRPC, OpenTelemetry, CEL and etcd's client.

package main

import (
	_ "k8s.io/cloud-provider/app"
)
