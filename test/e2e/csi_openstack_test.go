package e2e

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// openstackCSI is OpenStack's row of TestCSI: cinder.csi.openstack.org on
// openstacksim's Cinder and Nova, whose volume and attachment changes
// take a read or half a second to settle (so the sidecars meet Aborted
// and retry, as on a real cloud). The controller reads the simulator's
// cloud.conf, as the shipped manifests mount it; the node plugin finds
// its server ID and zone on a config drive (the first source of the
// default [Metadata] search-order).
var openstackCSI = csiCloud{
	name:          "openstack",
	command:       "./cmd/openstack-csi-driver",
	manifests:     "../../examples/manifests/openstack/csi",
	storageClass:  "csi-cinder-sc-xfs",
	snapshotClass: "csi-cinder-snapclass",
	start: func(t testing.TB, hv *csitest.LoopHypervisor, nodes []string) csiSim {
		opts := openstacksim.Options{ProvisioningReads: 1}
		opts.SettleAfter = 500 * time.Millisecond
		if hv != nil {
			opts.Hypervisor = hv
		}
		sim := openstacksim.NewServer(t, opts)
		var ids []string
		var zone string
		for _, n := range nodes {
			srv := sim.AddServer(openstacksim.NovaServer{Name: n})
			ids, zone = append(ids, srv.ID), cmp.Or(srv.AZ, "nova")
		}
		dir := t.TempDir()
		conf := filepath.Join(dir, "cloud.conf")
		if err := os.WriteFile(conf, []byte(sim.CloudConfig()), 0o600); err != nil {
			t.Fatal(err)
		}
		drive := filepath.Join(dir, "config-drive")
		if err := sim.WriteConfigDrive(drive, ids[0]); err != nil {
			t.Fatal(err)
		}
		return csiSim{
			token:         openstacksim.DefaultPassword,
			controllerEnv: map[string]string{},
			nodeEnv:       map[string]string{"OS_CONFIG_DRIVE_DIR": drive},
			files:         map[string]string{"--cloud-config": conf},
			nodeIDs:       ids,
			topology:      map[string]string{csidriver.TopologyKey: zone},
			device: func(handle string) string {
				return filepath.Join(hv.ByIDDir, openstacksim.ByIDName(handle))
			},
			left: func() []string {
				var left []string
				for _, v := range sim.Volumes() {
					left = append(left, "volume "+v.ID+" ("+v.Name+", "+v.Status+")")
				}
				for _, s := range sim.VolumeSnapshots() {
					left = append(left, "snapshot "+s.ID+" ("+s.Name+", "+s.Status+")")
				}
				return left
			},
			volumes: func() int { return len(sim.Volumes()) },
			snaps:   func() int { return len(sim.VolumeSnapshots()) },
			stats:   sim.Stats,
		}
	},
}
