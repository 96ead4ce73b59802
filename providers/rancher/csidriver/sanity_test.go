package csidriver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestCSISanity runs csi-sanity against the Rancher CSI provider talking
// to ranchersim over HTTP as go-rancher does, the controller's and the
// node's specs: the node's volumes are mounted for real by the simulated
// host's rancher-nfs volume plugin (a bind mount of the volume's
// directory on the share, where rancher-nfs mounts the NFS export),
// spoken to over its unix socket as the Docker daemon does, and
// bind-mounted at the targets; nothing is left behind in Cattle or on
// the share. ranchersim settles at once (csi-sanity does not retry an
// Aborted).
func TestCSISanity(t *testing.T) {
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(t testing.TB, _ *csitest.LoopHypervisor) csi.Provider {
			c := newCSICloud(t, ranchersim.Options{ProvisioningReads: -1}, 1)
			p := c.plugin(t, 0, ranchersim.DriverRancherNFS, false)
			t.Cleanup(func() {
				// Nothing left: no volume in Cattle, none on the share.
				if live := c.live(); len(live) > 0 {
					t.Errorf("volumes left in Cattle: %+v", live)
				}
				if left, err := os.ReadDir(filepath.Dir(p.Export("x"))); err != nil || len(left) > 0 {
					t.Errorf("left on the share: %v (%v)", left, err)
				}
			})
			return c.provider(0, nil)
		},
		IDGen: cattleIDGen{},
	})
	csitest.CheckSanity(t, res, "mount")
}
