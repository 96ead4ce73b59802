// Command openstack-csi-driver is the CSI driver for OpenStack Cinder
// volumes, a drop-in replacement for cloud-provider-openstack's
// cinder-csi-plugin: the driver name cinder.csi.openstack.org, its
// topology key, publish context and device paths, its StorageClass and
// VolumeSnapshotClass parameters, the cloud.conf of the cloud-config
// Secret (the OpenStack CCM's, with [BlockStorage]) and its flags. See
// package github.com/ccmkit/ccmkit/providers/openstack/csidriver.
package main

import (
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
)

func main() {
	p := csidriver.New()
	csi.Main(p, p.CommandOptions()...)
}
