//go:build floor_app

// k8s.io/cloud-provider/app, the upstream command framework.Main builds on:
// every upstream flag, leader election, and the secure port with the API
// server's delegated authentication and authorization. Its k8s.io/apiserver
// packages bring gRPC and OpenTelemetry (the webhook client), CEL and
// etcd's client (the server options).

package main

import (
	_ "k8s.io/cloud-provider/app"
)
