package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// brightboxCSI is Brightbox's row of TestCSI: csi.brightbox.com on gbsim
// volumes, whose creation, attach, detach and deletion take a read or
// half a second to settle (so the sidecars meet Aborted and retry, and a
// destroyed volume is gone a moment after the 202, as on the real API). Brightbox
// volumes are 40 GiB at least and the driver has no snapshots: the PVC is
// 40Gi (a sparse loop device) grown to 41Gi, and there is no snapshot or
// restore.
var brightboxCSI = csiCloud{
	name:         "brightbox",
	command:      "./cmd/brightbox-csi-driver",
	manifests:    "../../examples/manifests/brightbox/csi",
	storageClass: "brightbox-block-storage-xfs",
	size:         "40Gi",
	grownSize:    "41Gi",
	maxPerNode:   csidriver.DefaultVolumeLimit,
	start: func(t testing.TB, hv *csitest.LoopHypervisor, nodes []string) csiSim {
		const secret = "e2e-csi-client-secret-bb"
		opts := gbsim.Options{ClientSecret: secret, ProvisioningReads: 1}
		opts.SettleAfter = 500 * time.Millisecond
		if hv != nil {
			opts.Hypervisor = hv
		}
		sim := gbsim.NewServer(t, opts)
		var ids []string
		for _, n := range nodes {
			ids = append(ids, sim.AddServer(gbsim.CloudServer{Name: n}).ID)
		}
		metadata := sim.URL() + "/_sim/metadata/" + ids[0]
		env := sim.Env(sim.URL())
		env["BRIGHTBOX_METADATA_URL"] = metadata
		return csiSim{
			token:         secret,
			controllerEnv: env,
			nodeEnv:       map[string]string{"BRIGHTBOX_METADATA_URL": metadata},
			nodeIDs:       ids,
			device: func(handle string) string {
				for _, v := range sim.Volumes() {
					if v.ID == handle {
						serial := v.Serial
						if serial == "" {
							serial = v.ID
						}
						return filepath.Join(hv.ByIDDir, csidriver.ByIDPrefix+serial)
					}
				}
				return ""
			},
			left: func() []string {
				var left []string
				for _, v := range sim.Volumes() {
					if v.Status != "deleted" {
						left = append(left, "volume "+v.ID+" ("+v.Name+", "+v.Status+")")
					}
				}
				return left
			},
			volumes: func() int {
				n := 0
				for _, v := range sim.Volumes() {
					if v.Status != "deleted" {
						n++
					}
				}
				return n
			},
			snaps: func() int { return 0 },
			stats: sim.Stats,
		}
	},
}
