package main_test

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CSI driver binary must pass
// (cmdtest.CheckCSI) against a simulated Brightbox: a controller with no
// or wrong credentials refused naming the settings, never the secret,
// and the driver serving as the node server, with no topology and
// Brightbox's smallest volume, 40 GiB.
func TestBinary(t *testing.T) {
	const secret, wrong = "binary-test-client-secret-5d1e", "wrong-secret-do-not-print"
	sim := gbsim.NewServer(t, gbsim.Options{ClientSecret: secret, ProvisioningReads: -1})
	srv := sim.AddServer(gbsim.CloudServer{Name: "node-1"})
	env := sim.Env(sim.URL())
	env["BRIGHTBOX_METADATA_URL"] = sim.URL() + "/_sim/metadata/" + srv.ID
	cmdtest.CheckCSI(t, cmdtest.CSI{
		Env:     env,
		Writes:  sim.Writes,
		Help:    []string{"csi.brightbox.com", "BRIGHTBOX_METADATA_URL"},
		Secrets: []string{secret, wrong},
		Failures: []cmdtest.Failure{{
			Name: "no secret",
			Env:  map[string]string{"BRIGHTBOX_CLIENT_SECRET": ""},
			Want: []string{"BRIGHTBOX_CLIENT_SECRET: required with BRIGHTBOX_CLIENT"},
		}, {
			Name:    "wrong secret",
			Env:     map[string]string{"BRIGHTBOX_CLIENT_SECRET": wrong},
			Want:    []string{"check BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET"},
			Request: "token.create",
		}},
		DriverName: "csi.brightbox.com",
		Node:       &csipb.NodeGetInfoResponse{NodeId: srv.ID, MaxVolumesPerNode: 6},
		Volume: func(t *testing.T, v *csipb.Volume) {
			if vols := sim.Volumes(); v.GetCapacityBytes() != 40<<30 || len(vols) != 1 || vols[0].Size != 40960 || vols[0].ID != v.GetVolumeId() {
				t.Errorf("CreateVolume: %v, the cloud's volumes %+v; want one of 40 GiB (40960 MiB)", v, vols)
			}
		},
	})
}
