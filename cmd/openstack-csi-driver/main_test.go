package main_test

import (
	"maps"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CSI driver binary must pass
// (cmdtest.CheckCSI) against a simulated OpenStack, the driver configured
// as the shipped controller is: the CCM's cloud.conf (--cloud-config) and
// --cluster, with the node's metadata service in OS_METADATA_URL (and an
// empty config drive directory: the host's is never looked for). A
// controller without a cloud.conf, with a wrong password or a bad
// [BlockStorage] setting is refused naming the setting, never the
// password.
func TestBinary(t *testing.T) {
	const wrong = "wrong-password-do-not-print"
	sim := openstacksim.NewServer(t, openstacksim.Options{ProvisioningReads: -1})
	srv := sim.AddServer(openstacksim.NovaServer{Name: "node-1"})
	zone := map[string]string{"topology.cinder.csi.openstack.org/zone": "nova"}
	cmdtest.CheckCSI(t, cmdtest.CSI{
		Env:         map[string]string{"OS_METADATA_URL": sim.URL() + "/_sim/metadata/" + srv.ID, "OS_CONFIG_DRIVE_DIR": t.TempDir()},
		CloudConfig: sim.CloudConfig(),
		Args:        []string{"--cluster=kubernetes"},
		Writes:      sim.Writes,
		Help: []string{"--cloud-config", "--cluster", "--http-endpoint", "--with-topology", "--additional-topology",
			"--provide-controller-service", "--provide-node-service", "--pvc-annotations", "--user-agent", "cinder.csi.openstack.org"},
		Secrets: []string{openstacksim.DefaultPassword, wrong},
		Failures: []cmdtest.Failure{{
			Name: "no cloud config",
			Want: []string{"--cloud-config: required by the controller"},
		}, {
			Name:        "wrong password",
			CloudConfig: strings.Replace(sim.CloudConfig(), "password = "+openstacksim.DefaultPassword, "password = "+wrong, 1),
			Want:        []string{"authentication failed", "check [Global] username and password"},
			Request:     "keystone.tokens.create",
		}, {
			Name:        "bad attach limit",
			CloudConfig: sim.CloudConfig() + "[BlockStorage]\nnode-volume-attach-limit = 300\n",
			Want:        []string{"[BlockStorage] node-volume-attach-limit: 300 is not between 0 and 256"},
		}},
		DriverName: "cinder.csi.openstack.org",
		Node:       &csipb.NodeGetInfoResponse{NodeId: srv.ID, MaxVolumesPerNode: 256, AccessibleTopology: &csipb.Topology{Segments: zone}},
		Volume: func(t *testing.T, v *csipb.Volume) {
			if v.GetCapacityBytes() != 1<<30 || len(v.GetAccessibleTopology()) != 1 || !maps.Equal(v.GetAccessibleTopology()[0].GetSegments(), zone) {
				t.Errorf("CreateVolume: %v; want 1 GiB in zone nova", v)
			}
			vols := sim.Volumes()
			if len(vols) != 1 || vols[0].ID != v.GetVolumeId() || vols[0].Name != "pvc-1" || vols[0].Size != 1 ||
				vols[0].Metadata["cinder.csi.openstack.org/cluster"] != "kubernetes" {
				t.Errorf("the cloud's volumes: %+v; want pvc-1, 1 GiB, of the cluster kubernetes", vols)
			}
		},
	})
}
