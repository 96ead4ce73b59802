package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBinary runs the checks every CSI driver binary must pass
// (cmdtest.CheckCSI) against a simulated Triton: a controller with no or
// a wrong key refused naming the settings, never the key, and the driver
// serving as a machine's node plugin (its instance metadata answered by
// tritonsim's script in mdata-get's place), in the segment of its fabric network,
// with Triton's smallest volume, 10 GiB, ready with its NFS export.
func TestBinary(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{ProvisioningReads: -1})
	m := sim.AddMachine(tritonsim.Machine{Name: "node-1"})
	fabric := m.NICs[1]
	env := sim.Env(sim.URL())
	mdata, err := sim.MdataGet(t.TempDir(), m)
	if err != nil {
		t.Fatal(err)
	}
	env["TRITON_MDATA_GET"] = mdata
	wrong := otherKey(t)
	cmdtest.CheckCSI(t, cmdtest.CSI{
		Env:     env,
		Writes:  sim.Writes,
		Help:    []string{csidriver.DriverName, "TRITON_KEY_MATERIAL", "TRITON_MDATA_GET"},
		Secrets: []string{pemLine(string(sim.AccountKeyPEM())), pemLine(wrong)},
		Failures: []cmdtest.Failure{{
			Name: "no key",
			Env:  map[string]string{"TRITON_KEY_MATERIAL": ""},
			Want: []string{"TRITON_KEY_MATERIAL: required by the controller"},
		}, {
			Name:    "a key CloudAPI does not know",
			Env:     map[string]string{"TRITON_KEY_MATERIAL": wrong, "TRITON_KEY_ID": ""},
			Want:    []string{"TRITON_KEY_ID: CloudAPI at", "refused the key"},
			Request: "account.get",
		}},
		DriverName: csidriver.DriverName,
		Node: &csipb.NodeGetInfoResponse{NodeId: m.ID,
			AccessibleTopology: &csipb.Topology{Segments: map[string]string{csidriver.TopologyKey: fabric.Network}}},
		Volume: func(t *testing.T, v *csipb.Volume) {
			vols := sim.Volumes()
			if v.GetCapacityBytes() != 10<<30 || len(vols) != 1 || vols[0].Size != 10240 || vols[0].ID != v.GetVolumeId() ||
				v.GetVolumeContext()[csidriver.ContextFilesystemPath] != vols[0].FilesystemPath || vols[0].FilesystemPath == "" {
				t.Errorf("CreateVolume: %v, the cloud's volumes %+v; want one of 10 GiB (10240 MiB), its filesystem_path in the context", v, vols)
			}
		},
	})
}

// otherKey is a key CloudAPI does not know (ECDSA, SEC1 PEM).
func otherKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// pemLine is a line of a PEM's body: what no output may hold.
func pemLine(p string) string {
	lines := strings.Split(strings.TrimSpace(p), "\n")
	return lines[len(lines)/2]
}
