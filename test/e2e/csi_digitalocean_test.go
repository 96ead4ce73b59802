package e2e

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// digitaloceanCSI is DigitalOcean's row of TestCSI: dobs.csi.digitalocean.com
// on dosim volumes, with actions that take a read to complete (so the
// sidecars meet Aborted and retry, as on the real API).
var digitaloceanCSI = csiCloud{
	name:          "digitalocean",
	command:       "./cmd/digitalocean-csi-driver",
	manifests:     "../../examples/manifests/digitalocean/csi",
	storageClass:  "do-block-storage-xfs",
	snapshotClass: "do-block-storage",
	start: func(t testing.TB, hv *csitest.LoopHypervisor, nodes []string) csiSim {
		const token = "e2e-csi-token-do"
		opts := dosim.Options{Token: token, ProvisioningReads: 1}
		if hv != nil {
			opts.Hypervisor = hv
		}
		sim := dosim.NewServer(t, opts)
		var ids []string
		var region string
		for _, n := range nodes {
			d := sim.AddDroplet(dosim.Droplet{Name: n})
			ids, region = append(ids, strconv.Itoa(d.ID)), d.Region.Slug
		}
		metadata := sim.URL() + "/_sim/metadata/" + ids[0]
		return csiSim{
			token: token,
			controllerEnv: map[string]string{
				"DIGITALOCEAN_ACCESS_TOKEN": token,
				"DIGITALOCEAN_API_URL":      sim.URL() + "/",
				"DIGITALOCEAN_METADATA_URL": metadata,
			},
			nodeEnv:  map[string]string{"DIGITALOCEAN_METADATA_URL": metadata},
			nodeIDs:  ids,
			topology: map[string]string{csidriver.TopologyKey: region},
			device: func(handle string) string {
				for _, v := range sim.State().Volumes {
					if v.ID == handle {
						return filepath.Join(hv.ByIDDir, csidriver.ByIDPrefix+v.Name)
					}
				}
				return ""
			},
			left: func() []string {
				st := sim.State()
				var left []string
				for _, v := range st.Volumes {
					left = append(left, "volume "+v.ID+" ("+v.Name+")")
				}
				for _, s := range st.Snapshots {
					left = append(left, "snapshot "+s.ID+" ("+s.Name+")")
				}
				return left
			},
			volumes: func() int { return len(sim.State().Volumes) },
			snaps:   func() int { return len(sim.State().Snapshots) },
			stats:   sim.Stats,
		}
	},
}
