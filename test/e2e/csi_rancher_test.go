package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// rancherCSI is Rancher's row of TestCSI: cattle.csi.rancher.com on
// ranchersim's Cattle volumes in the rancher-nfs storage driver, whose
// records settle a read later (the provisioner meets Aborted and
// retries). Each node is a Rancher host running rancher-nfs's Docker
// volume plugin (ranchersim's stand-in, in this process and mount
// namespace) over one shared export, the NFS share: the node plugins ask
// it to mount the volume, as Docker does for a container, and bind-mount
// its mountpoint into the Pods' targets.
var rancherCSI = csiCloud{
	name:         "rancher",
	command:      "./cmd/rancher-csi-driver",
	manifests:    "../../examples/manifests/rancher/csi",
	storageClass: "rancher-nfs",
	shared:       true,
	start: func(t testing.TB, _ *csitest.LoopHypervisor, nodes []string) csiSim {
		const secret = "e2e-csi-cattle-secret-r1"
		sim := ranchersim.NewServer(t, ranchersim.Options{SecretKey: secret, ProvisioningReads: 1})
		sim.AddStorageDriver(ranchersim.RancherNFS())
		// A short directory: a unix socket's path is at most 107 bytes.
		dir, err := os.MkdirTemp("", "rcsi") //nolint:usetesting // t.TempDir() holds the test name: too long for a socket
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		share := filepath.Join(dir, "share")
		var ids []string
		var nodeEnvs []map[string]string
		for _, n := range nodes {
			host := sim.AddHost(ranchersim.Host{Hostname: n})
			sockets := filepath.Join(dir, n, "plugins")
			p, err := sim.StartVolumePlugin(ranchersim.VolumePluginOptions{
				Driver: ranchersim.DriverRancherNFS, HostID: host.ID, SocketDir: sockets, ExportDir: share,
				MountRoot: filepath.Join(dir, n, "volumes"),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := p.Close(); err != nil {
					t.Errorf("stopping the rancher-nfs plugin of %s: %v", n, err)
				}
			})
			ids = append(ids, n)
			nodeEnvs = append(nodeEnvs, map[string]string{"NODE_NAME": n, "RANCHER_VOLUME_PLUGIN_DIR": sockets})
		}
		live := func() []ranchersim.Volume {
			var out []ranchersim.Volume
			for _, v := range sim.Volumes() {
				if v.Removed == nil && v.State != ranchersim.StateRemoving {
					out = append(out, v)
				}
			}
			return out
		}
		return csiSim{
			token:         secret,
			controllerEnv: sim.Env(sim.URL()),
			nodeEnvs:      nodeEnvs,
			nodeIDs:       ids,
			left: func() []string {
				var left []string
				for _, v := range live() {
					left = append(left, "volume "+v.ID+" ("+v.Name+", "+v.State+")")
				}
				data, _ := os.ReadDir(share)
				for _, e := range data {
					left = append(left, "data on the share: "+e.Name())
				}
				return left
			},
			volumes: func() int { return len(live()) },
			snaps:   func() int { return 0 },
			stats:   sim.Stats,
		}
	},
}
