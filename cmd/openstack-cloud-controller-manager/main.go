// Command openstack-cloud-controller-manager is the Kubernetes
// cloud-controller-manager for OpenStack, a drop-in replacement for
// kubernetes/cloud-provider-openstack's openstack-cloud-controller-manager:
// the same --cloud-config file (cloud.conf, INI) and providerIDs. See
// package github.com/ccmkit/ccmkit/providers/openstack.
package main

import (
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/openstack"
)

func main() { framework.Main(openstack.New()) }
