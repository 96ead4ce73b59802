package main_test

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CSI driver binary must pass
// (cmdtest.CheckCSI) against a simulated Rancher environment with the
// rancher-nfs storage driver: a controller with no or wrong settings
// refused naming them, never the secret key, and the driver serving as
// node-1's plugin (NODE_NAME), with no topology and no volume limit; a
// volume of no StorageClass is rancher-nfs's, of 1 GiB (recorded in its
// description: rancher-nfs takes no size).
func TestBinary(t *testing.T) {
	const secret, wrong = "binary-test-cattle-secret-3b8d", "wrong-secret-do-not-print"
	sim := ranchersim.NewServer(t, ranchersim.Options{SecretKey: secret, ProvisioningReads: -1})
	sim.AddStorageDriver(ranchersim.RancherNFS())
	env := sim.Env(sim.URL())
	env["NODE_NAME"] = "node-1"
	env["RANCHER_VOLUME_PLUGIN_DIR"] = t.TempDir()
	cmdtest.CheckCSI(t, cmdtest.CSI{
		Env:     env,
		Writes:  sim.Writes,
		Help:    []string{"cattle.csi.rancher.com", "CATTLE_URL", "NODE_NAME", "RANCHER_VOLUME_PLUGIN_DIR"},
		Secrets: []string{secret, wrong},
		Failures: []cmdtest.Failure{{
			Name: "no secret key",
			Env:  map[string]string{"CATTLE_SECRET_KEY": ""},
			Want: []string{"CATTLE_SECRET_KEY: required by the controller"},
		}, {
			Name:    "wrong secret key",
			Env:     map[string]string{"CATTLE_SECRET_KEY": wrong},
			Want:    []string{"CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API at"},
			Request: "root.get",
		}},
		DriverName: "cattle.csi.rancher.com",
		Node:       &csipb.NodeGetInfoResponse{NodeId: "node-1"},
		Volume: func(t *testing.T, v *csipb.Volume) {
			vols := sim.Volumes()
			if v.GetCapacityBytes() != 1<<30 || len(vols) != 1 || vols[0].Driver != "rancher-nfs" || v.GetVolumeId() != vols[0].ID+"/rancher-nfs/pvc-1" {
				t.Errorf("CreateVolume: %v, the cloud's volumes %+v; want one of rancher-nfs, of 1 GiB", v, vols)
			}
		},
	})
}
