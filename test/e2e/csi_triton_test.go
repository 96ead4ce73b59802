package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// tritonCSI is Triton's row of TestCSI: tritonnfs.csi.joyent.com on
// tritonsim's RFD 26 volumes, which take a read to be ready (the
// provisioner meets Aborted and retries) and half a second to be gone
// once deleted. A volume is an NFS server's
// export, used by Pods on both nodes at once: the node plugins' NFS
// mounts go through nfsStandIn (this kernel has no NFS client), which
// bind-mounts the export's directory in tritonsim. Triton's smallest
// volume is 10 GiB.
var tritonCSI = csiCloud{
	name:         "triton",
	command:      "./cmd/triton-csi-driver",
	manifests:    "../../examples/manifests/triton/csi",
	storageClass: "triton-nfs",
	size:         "10Gi",
	shared:       true,
	start: func(t testing.TB, _ *csitest.LoopHypervisor, nodes []string) csiSim {
		opts := tritonsim.Options{ProvisioningReads: 1}
		// A deleted volume is gone a moment after the 204, as on Triton,
		// whether or not anyone reads it.
		opts.SettleAfter = 500 * time.Millisecond
		sim := tritonsim.NewServer(t, opts)
		nfs := newNFSStandIn(t)
		var ids []string
		var nodeEnvs []map[string]string
		var fabric string
		for _, n := range nodes {
			m := sim.AddMachine(tritonsim.Machine{Name: n})
			fabric = m.NICs[1].Network // every machine's: the default fabric network
			mdata, err := sim.MdataGet(t.TempDir(), m)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
			nodeEnvs = append(nodeEnvs, map[string]string{"TRITON_MDATA_GET": mdata, "PATH": nfs.path()})
		}
		pem := strings.Split(strings.TrimSpace(string(sim.AccountKeyPEM())), "\n")
		live := func() []tritonsim.Volume { return sim.Volumes() }
		return csiSim{
			token:         pem[len(pem)/2],
			controllerEnv: sim.Env(sim.URL()),
			nodeEnvs:      nodeEnvs,
			nodeIDs:       ids,
			topology:      map[string]string{csidriver.TopologyKey: fabric},
			beforePublish: func(t testing.TB, handle string) {
				v, ok := sim.Volume(handle)
				if !ok {
					t.Fatalf("no volume %s", handle)
				}
				dir, err := sim.NFSExport(v.FilesystemPath)
				if err != nil {
					t.Fatal(err)
				}
				nfs.export(t, v.FilesystemPath, dir)
			},
			left: func() []string {
				var left []string
				for _, v := range live() {
					left = append(left, "volume "+v.ID+" ("+v.Name+", "+v.State+")")
				}
				if dir := sim.NFSExportDir(); dir != "" {
					exports, _ := os.ReadDir(dir)
					for _, e := range exports {
						left = append(left, "NFS export "+filepath.Join(dir, e.Name()))
					}
				}
				return left
			},
			volumes: func() int { return len(live()) },
			snaps:   func() int { return 0 },
			stats:   sim.Stats,
		}
	},
}
