package csidriver_test

import (
	"fmt"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestCSISanity runs csi-sanity against the OpenStack CSI provider
// talking to openstacksim (Keystone, Nova, Cinder) over HTTP with
// gophercloud, its volumes real loop devices (openstacksim's Hypervisor)
// linked under virtio-<id[:20]>, formatted and mounted for real, in mount
// and block access modes. openstacksim settles volume operations at once
// (csi-sanity does not retry an Aborted), and the driver reports as many
// volumes per node as Nova takes disks per server.
func TestCSISanity(t *testing.T) {
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csi.Provider {
			c := newCSICloud(t, openstacksim.Options{Hypervisor: hv, ProvisioningReads: -1})
			// Nova's disks per server (openstacksim's
			// max_disk_devices_to_attach, 26) less the root disk.
			return c.provider(t, fmt.Sprintf("[BlockStorage]\nnode-volume-attach-limit = %d\n", openstacksim.DefaultMaxDiskDevices-1))
		},
		IDGen: osIDGen{},
	})
	csitest.CheckSanity(t, res)
}
