package csidriver_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestCSISanity runs csi-sanity against the Brightbox CSI provider talking
// to gbsim over HTTP with gobrightbox, its volumes real loop devices
// (gbsim's Hypervisor), formatted and mounted for real, in mount and
// block access modes. gbsim settles at once (csi-sanity does not retry an
// Aborted); volumes are Brightbox's smallest, 40 GiB, sparse.
func TestCSISanity(t *testing.T) {
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csi.Provider {
			return newCSICloud(t, gbsim.Options{Hypervisor: hv, ProvisioningReads: -1, DeletedReads: -1}).provider(nil)
		},
		IDGen: bbIDGen{},
	})
	csitest.CheckSanity(t, res)
}
