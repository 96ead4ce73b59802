//go:build floor_clientgo

// client-go's clientset and informers: every API group's types and their
// registration in the scheme.

package main

import (
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
)
