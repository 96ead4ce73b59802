package main_test

import (
	"slices"
	"strconv"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CSI driver binary must pass
// (cmdtest.CheckCSI) against a simulated DigitalOcean: --help with
// csi-digitalocean's flags, a controller with no or a wrong token
// refused naming the setting, never the token, and the driver serving as
// the node droplet with --do-tag.
func TestBinary(t *testing.T) {
	const token, wrong = "dop_v1_binary-test-token-0c2e", "dop_v1_wrong-token-do-not-print"
	sim := dosim.NewServer(t, dosim.Options{Token: token, ProvisioningReads: -1})
	droplet := sim.AddDroplet(dosim.Droplet{Name: "node-1"})
	cmdtest.CheckCSI(t, cmdtest.CSI{
		Env: map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": token, "DIGITALOCEAN_API_URL": sim.URL() + "/",
			"DIGITALOCEAN_METADATA_URL": sim.URL() + "/_sim/metadata/" + strconv.Itoa(droplet.ID)},
		Args:   []string{"--do-tag", "k8s:cluster-1"},
		Writes: sim.Writes,
		Help: []string{"--token", "--url", "--region", "--do-tag", "--volume-limit", "--driver-name", "--debug-addr",
			"--default-volumes-page-size", "--do-api-rate-limit", "--validate-attachment", "--metadata-url"},
		Secrets: []string{token, wrong},
		Failures: []cmdtest.Failure{{
			Name: "no token",
			Env:  map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": ""},
			Want: []string{"DIGITALOCEAN_ACCESS_TOKEN: required"},
		}, {
			Name:    "wrong token",
			Env:     map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": wrong},
			Want:    []string{"rejected the token (check DIGITALOCEAN_ACCESS_TOKEN or DIGITALOCEAN_ACCESS_TOKEN_FILE)"},
			Request: "account.get",
		}},
		DriverName: "dobs.csi.digitalocean.com",
		Node: &csipb.NodeGetInfoResponse{NodeId: strconv.Itoa(droplet.ID), MaxVolumesPerNode: 7,
			AccessibleTopology: &csipb.Topology{Segments: map[string]string{"region": dosim.DefaultRegion}}},
		Volume: func(t *testing.T, v *csipb.Volume) {
			if v.GetCapacityBytes() != 16<<30 || v.GetAccessibleTopology()[0].GetSegments()["region"] != dosim.DefaultRegion {
				t.Errorf("CreateVolume: %v; want 16 GiB in %s", v, dosim.DefaultRegion)
			}
			if vols := sim.Volumes(); len(vols) != 1 || vols[0].SizeGigabytes != 16 || !slices.Equal(vols[0].Tags, []string{"k8s:cluster-1"}) {
				t.Errorf("the cloud's volumes: %+v; want one of 16 GiB tagged k8s:cluster-1", vols)
			}
		},
	})
}
