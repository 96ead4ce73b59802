package csidriver_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestCSIDataRoundTrip runs the data round trip (csitest.RunDataRoundTrip)
// on gbsim volumes, through gobrightbox, on loop devices, without
// snapshots (Brightbox has no volume snapshot). gbsim's volumes, attaches
// and detaches settle on their second read, so each is first answered
// Aborted and retried, as the sidecars do: the test wants some. Beyond
// the common flow, each volume's publish context carries its serial and
// its device is linked as virtio-<serial>.
func TestCSIDataRoundTrip(t *testing.T) {
	csitest.RunDataRoundTrip(t, csitest.RoundTripOptions{
		Filesystems: []csitest.RoundTripFilesystem{{Type: "ext4", Size: 40 * gib, Grown: 41 * gib}, {Type: "xfs", Size: 40 * gib, Grown: 41 * gib}},
		WantAborted: true,
		NoSnapshots: true,
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csitest.RoundTripCloud {
			cloud := newCSICloud(t, gbsim.Options{Hypervisor: hv, ProvisioningReads: 2, DeletedReads: -1})
			return csitest.RoundTripCloud{
				Provider: cloud.provider(nil),
				Node:     cloud.node(),
				Left: func() []string {
					var left []string
					for _, v := range cloud.sim.Volumes() {
						if v.Status != gbsim.StatusDeleting && v.Status != gbsim.StatusDeleted {
							left = append(left, "volume "+v.ID)
						}
					}
					return left
				},
				Published: func(t testing.TB, name, id string, pc map[string]string) {
					if pc[csidriver.DriverName+"/serial"] != id {
						t.Errorf("publish context %v, want the serial %s", pc, id)
					}
					hv.CheckLink(t, csidriver.ByIDPrefix+id)
					if v := cloud.volume(t, id); v.Name != name || v.Size != 40960 && v.Size != 41984 {
						t.Errorf("volume %+v, want named %s, 40 or 41 GiB", v, name)
					}
				},
			}
		},
	})
}
