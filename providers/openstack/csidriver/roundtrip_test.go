package csidriver_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

const gib = int64(1) << 30

// TestCSIDataRoundTrip runs the data round trip (csitest.RunDataRoundTrip)
// on openstacksim volumes, through gophercloud, on loop devices.
// openstacksim's volume operations (create, attach, detach, extend,
// delete) take two reads to settle, so every attach, detach, expand and
// delete is first answered Aborted and retried, and the snapshot answered
// not ready to use, as the sidecars see them: the test wants some. Beyond the common flow, each volume's publish context
// holds the device Nova gave it, and its device is linked under its
// virtio serial, where the node finds it.
func TestCSIDataRoundTrip(t *testing.T) {
	csitest.RunDataRoundTrip(t, csitest.RoundTripOptions{
		Filesystems: []csitest.RoundTripFilesystem{{Type: "ext4", Size: gib, Grown: 2 * gib}, {Type: "xfs", Size: gib, Grown: 2 * gib}},
		WantAborted: true,
		// The volume is attached when it is snapshotted.
		SnapshotParameters: map[string]string{"force-create": "true"},
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csitest.RoundTripCloud {
			cloud := newCSICloud(t, openstacksim.Options{Hypervisor: hv, ProvisioningReads: 2})
			return csitest.RoundTripCloud{
				Provider: cloud.provider(t, ""),
				Node:     cloud.node(),
				Left: func() []string {
					var left []string
					for _, v := range cloud.sim.Volumes() {
						left = append(left, "volume "+v.ID)
					}
					for _, s := range cloud.sim.VolumeSnapshots() {
						left = append(left, "snapshot "+s.ID)
					}
					return left
				},
				Published: func(t testing.TB, _, id string, pc map[string]string) {
					if dev := pc[csidriver.PublishContextDevicePath]; len(dev) < len("/dev/vdb") || dev[:len("/dev/vd")] != "/dev/vd" {
						t.Errorf("publish context %v, want Nova's device /dev/vd*", pc)
					}
					hv.CheckLink(t, csidriver.ByIDPrefix+id[:20])
				},
			}
		},
	})
}
