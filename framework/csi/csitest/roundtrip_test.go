package csitest_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

// TestDataRoundTrip runs the data round trip (RunDataRoundTrip) against
// FakeCloud, on ext4 and xfs: what csi-sanity does not check.
func TestDataRoundTrip(t *testing.T) {
	csitest.RunDataRoundTrip(t, csitest.RoundTripOptions{
		Setup: func(_ testing.TB, hv *csitest.LoopHypervisor) csitest.RoundTripCloud {
			cloud := csitest.NewFakeCloud(hv)
			return csitest.RoundTripCloud{
				Provider: cloud,
				Node:     csitest.FakeNode,
				Left: func() []string {
					var left []string
					for _, v := range cloud.Volumes() {
						left = append(left, "volume "+v.ID)
					}
					for _, s := range cloud.Snapshots() {
						left = append(left, "snapshot "+s.ID)
					}
					return left
				},
			}
		},
	})
}
