package csidriver_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

const gib = int64(1) << 30

// TestCSIDataRoundTrip runs the data round trip (csitest.RunDataRoundTrip)
// on dosim volumes, through godo, on loop devices. dosim's actions take
// two reads to complete, so every attach, detach and resize is first
// answered Aborted and retried, as the sidecars do: the test wants some.
// Beyond the common flow, each volume's publish context names it and its
// device is linked under DigitalOcean's by-id name.
func TestCSIDataRoundTrip(t *testing.T) {
	csitest.RunDataRoundTrip(t, csitest.RoundTripOptions{
		Filesystems: []csitest.RoundTripFilesystem{{Type: "ext4", Size: gib, Grown: 2 * gib}, {Type: "xfs", Size: gib, Grown: 2 * gib}},
		WantAborted: true,
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csitest.RoundTripCloud {
			cloud := newCSICloud(t, dosim.Options{Hypervisor: hv, ProvisioningReads: 2})
			return csitest.RoundTripCloud{
				Provider: cloud.provider(nil),
				Node:     cloud.node(),
				Left: func() []string {
					st := cloud.sim.State()
					var left []string
					for _, v := range st.Volumes {
						left = append(left, "volume "+v.ID)
					}
					for _, s := range st.Snapshots {
						left = append(left, "snapshot "+s.ID)
					}
					return left
				},
				Published: func(t testing.TB, name, _ string, pc map[string]string) {
					if pc[csidriver.DriverName+"/volume-name"] != name {
						t.Errorf("publish context %v, want the volume name %s", pc, name)
					}
					hv.CheckLink(t, csidriver.ByIDPrefix+name)
				},
			}
		},
	})
}
