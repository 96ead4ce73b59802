package csidriver_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestCSISanity runs csi-sanity against the DigitalOcean CSI provider
// talking to dosim over HTTP with godo, its volumes real loop devices
// (dosim's Hypervisor), formatted and mounted for real, in mount and
// block access modes. dosim completes actions at once (csi-sanity does
// not retry an Aborted) and takes as many volumes per droplet as the
// driver reports (csi-digitalocean's 7, DigitalOcean's old limit).
func TestCSISanity(t *testing.T) {
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csi.Provider {
			c := newCSICloud(t, dosim.Options{
				Hypervisor: hv, ProvisioningReads: -1, VolumesPerDroplet: csidriver.DefaultVolumeLimit,
			})
			return c.provider(nil)
		},
		IDGen: doIDGen{},
	})
	csitest.CheckSanity(t, res)
}
