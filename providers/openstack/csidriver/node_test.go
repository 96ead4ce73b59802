package csidriver_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// The node plugin reads only the instance metadata (no cloud needed but
// for TestCSINodeFromSimulator) and finds devices by their serial.

const testServerID = "5f6c0b1e-9a3d-4c2b-8e7f-0a1b2c3d4e5f"

// metadataService serves body as meta_data.json under /openstack/latest,
// with status code; it returns its base URL.
func metadataService(t *testing.T, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openstack/latest/meta_data.json" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// configDrive is a directory laid out as a mounted config drive with
// meta_data.json holding body.
func configDrive(t *testing.T, body string) string {
	t.Helper()
	path := writeFile(t, "config-2/openstack/latest/meta_data.json", body)
	return filepath.Dir(filepath.Dir(filepath.Dir(path)))
}

func metaData(id, zone string) string {
	return `{"uuid": "` + id + `", "name": "node-1", "availability_zone": "` + zone + `", "hostname": "node-1.novalocal", "project_id": "p"}`
}

// nodeInfo starts a node plugin configured by env and args, and returns
// its NodeGetInfo.
func nodeInfo(t *testing.T, env map[string]string, args ...string) *csipb.NodeGetInfoResponse {
	t.Helper()
	p := csitest.WithFlags(t, csidriver.NewWithEnv(env), args...)
	d := csitest.StartDriver(t, csi.Options{Mode: csi.ModeNode, Provider: p}, 0)
	info, err := d.Node.NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil {
		t.Fatalf("NodeGetInfo: %v", err)
	}
	return info
}

// TestCSINodeInfo: the node ID and zone come from the metadata service or
// the config drive, in [Metadata] search-order, as cinder-csi-plugin
// reads them; the attach limit from [BlockStorage]; --additional-topology
// adds segments; --with-topology=false reports none.
func TestCSINodeInfo(t *testing.T) {
	const other = "0d5c2b4a-1111-4222-8333-944455556666"
	unreachable := "http://127.0.0.1:1"
	emptyDir := t.TempDir()
	for _, tc := range []struct {
		name      string
		conf      string
		env       map[string]string
		args      []string
		wantID    string
		wantTopo  map[string]string
		wantLimit int64
	}{
		{
			name:   "metadata service",
			conf:   "[Metadata]\nsearch-order = metadataService\n",
			env:    map[string]string{"OS_METADATA_URL": metadataService(t, 200, metaData(testServerID, "nova"))},
			wantID: testServerID, wantTopo: map[string]string{csidriver.TopologyKey: "nova"}, wantLimit: 256,
		},
		{
			name: "config drive first, by default",
			env: map[string]string{"OS_METADATA_URL": metadataService(t, 200, metaData(other, "nova")),
				"OS_CONFIG_DRIVE_DIR": configDrive(t, metaData(testServerID, "az-2"))},
			wantID: testServerID, wantTopo: map[string]string{csidriver.TopologyKey: "az-2"}, wantLimit: 256,
		},
		{
			name:   "metadata service first",
			conf:   "[Metadata]\nsearch-order = metadataService,configDrive\n",
			env:    map[string]string{"OS_METADATA_URL": metadataService(t, 200, metaData(testServerID, "nova"))},
			args:   []string{"--config-drive-dir", configDrive(t, metaData(other, "az-2"))},
			wantID: testServerID, wantTopo: map[string]string{csidriver.TopologyKey: "nova"}, wantLimit: 256,
		},
		{
			name:   "no config drive: the metadata service",
			env:    map[string]string{"OS_CONFIG_DRIVE_DIR": emptyDir},
			args:   []string{"--metadata-url", metadataService(t, 200, metaData(testServerID, "az one"))},
			wantID: testServerID, wantTopo: map[string]string{csidriver.TopologyKey: "az-one"}, wantLimit: 256,
		},
		{
			name:   "attach limit and additional topology",
			conf:   "[BlockStorage]\nnode-volume-attach-limit = 12\nrescan-on-resize = true\n",
			env:    map[string]string{"OS_METADATA_URL": unreachable, "OS_CONFIG_DRIVE_DIR": configDrive(t, metaData(testServerID, "nova"))},
			args:   []string{"--additional-topology", "topology.kubernetes.io/region=RegionOne", "--additional-topology", "example.com/rack=r1"},
			wantID: testServerID, wantTopo: map[string]string{csidriver.TopologyKey: "nova", "topology.kubernetes.io/region": "RegionOne",
				"example.com/rack": "r1"}, wantLimit: 12,
		},
		{
			name:   "without topology",
			env:    map[string]string{"OS_METADATA_URL": unreachable, "OS_CONFIG_DRIVE_DIR": configDrive(t, metaData(testServerID, "nova"))},
			args:   []string{"--with-topology=false", "--additional-topology", "topology.kubernetes.io/region=RegionOne"},
			wantID: testServerID, wantLimit: 256,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.conf != "" {
				args = append(args, "--cloud-config", writeFile(t, "cloud.conf", tc.conf))
			}
			info := nodeInfo(t, tc.env, args...)
			if info.GetNodeId() != tc.wantID || info.GetMaxVolumesPerNode() != tc.wantLimit {
				t.Errorf("NodeGetInfo: node %q, %d volumes; want %q, %d", info.GetNodeId(), info.GetMaxVolumesPerNode(), tc.wantID, tc.wantLimit)
			}
			if got := info.GetAccessibleTopology().GetSegments(); !equalMaps(got, tc.wantTopo) {
				t.Errorf("topology %v, want %v", got, tc.wantTopo)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCSINodeMetadataErrors: a node plugin that cannot read its server ID
// stops with an error naming every source and its setting; a malformed
// answer is an error, not a panic.
func TestCSINodeMetadataErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		body   string
		naming []string
	}{
		{"not JSON", 200, "<html>", []string{"malformed meta_data.json"}},
		{"JSON of another shape", 200, `["uuid"]`, []string{"malformed meta_data.json"}},
		{"no uuid", 200, `{"name": "node-1"}`, []string{`uuid "" is not a server ID`}},
		{"uuid of another type", 200, `{"uuid": 7}`, []string{"malformed meta_data.json"}},
		{"not a server ID", 200, metaData("../../x", "nova"), []string{"is not a server ID"}},
		{"not found", 404, "<html>404</html>", []string{"404 Not Found"}},
		{"too large", 200, `{"uuid": "` + testServerID + `", "x": "` + strings.Repeat("x", 2<<20) + `"}`, []string{"larger than"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := csidriver.NewWithEnv(map[string]string{"OS_METADATA_URL": metadataService(t, tc.code, tc.body), "OS_CONFIG_DRIVE_DIR": t.TempDir()})
			err := initCSI(t, p, csi.ModeNode, nil)
			want := append([]string{"OS_METADATA_URL", "OS_CONFIG_DRIVE_DIR", "[Metadata] search-order configDrive,metadataService",
				"meta_data.json: no such file"}, tc.naming...)
			for _, w := range want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Init: %v; want it to name %q", err, w)
				}
			}
		})
	}
}

// TestCSINodeFromSimulator: the node plugin reads its server ID and zone
// from openstacksim's metadata service, and from a config drive it wrote.
func TestCSINodeFromSimulator(t *testing.T) {
	cloud := newCSICloud(t, openstacksim.Options{})
	zoned := cloud.sim.AddServer(openstacksim.NovaServer{Name: "node-2", AZ: "az-2"})
	drive := t.TempDir()
	if err := cloud.sim.WriteConfigDrive(drive, zoned.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantID   string
		wantZone string
	}{
		{"metadata service", cloud.env, cloud.node(), "nova"},
		{"config drive", map[string]string{"OS_CONFIG_DRIVE_DIR": drive, "OS_METADATA_URL": "http://127.0.0.1:1"}, zoned.ID, "az-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := nodeInfo(t, tc.env)
			if info.GetNodeId() != tc.wantID || info.GetAccessibleTopology().GetSegments()[csidriver.TopologyKey] != tc.wantZone ||
				info.GetMaxVolumesPerNode() != csidriver.DefaultNodeVolumeAttachLimit {
				t.Errorf("NodeGetInfo: %v; want server %s in %s", info, tc.wantID, tc.wantZone)
			}
		})
	}
}

// TestCSIDevicePath: the device is found by its serial, as
// cinder-csi-plugin finds it (virtio-<id[:20]>, virtio-<id>,
// scsi-0QEMU_QEMU_HARDDISK_..., wwn-0x...), then by the publish context's
// DevicePath only if it exists and is not another volume's; else the
// first name, which the framework waits for.
func TestCSIDevicePath(t *testing.T) {
	const id = "8c3e2a41-7d5f-4b6a-9e0c-1f2a3b4c5d6e"
	byID, sys, dev := t.TempDir(), t.TempDir(), t.TempDir()
	csidriver.SetSysBlock(t, sys)
	p := csidriver.New()
	names := csidriver.DeviceNames(id)
	want := []string{"virtio-8c3e2a41-7d5f-4b6a-9", "virtio-" + id, "scsi-0QEMU_QEMU_HARDDISK_8c3e2a41-7d5f-4b6a-9",
		"scsi-0QEMU_QEMU_HARDDISK_" + id, "wwn-0x8c3e2a417d5f4b6a9e0c1f2a3b4c5d6e"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("device names %q, want %q", names, want)
	}
	vdb, vdc := filepath.Join(dev, "vdb"), filepath.Join(dev, "vdc")
	for _, f := range []string{vdb, vdc, filepath.Join(sys, "vdc", "serial")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("0123456789abcdef0123\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := func(pc map[string]string) string {
		t.Helper()
		got, err := p.DevicePath(byID, id, pc)
		if err != nil {
			t.Fatalf("DevicePath: %v", err)
		}
		return got
	}
	first := filepath.Join(byID, want[0])
	if got := path(nil); got != first {
		t.Errorf("no device: %s, want %s (to wait for)", got, first)
	}
	if got := path(map[string]string{"DevicePath": filepath.Join(dev, "vdz")}); got != first {
		t.Errorf("a DevicePath that does not exist: %s, want %s", got, first)
	}
	if got := path(map[string]string{"DevicePath": vdc}); got != first {
		t.Errorf("a DevicePath whose serial is another volume's: %s, want %s", got, first)
	}
	if got := path(map[string]string{"DevicePath": vdb}); got != vdb {
		t.Errorf("a DevicePath without a serial: %s, want it", got)
	}
	for i := len(want) - 1; i >= 0; i-- {
		link := filepath.Join(byID, want[i])
		if err := os.Symlink(vdb, link); err != nil {
			t.Fatal(err)
		}
		if got := path(map[string]string{"DevicePath": vdb}); got != link {
			t.Errorf("with %s: %s", want[i], got)
		}
	}
	for _, bad := range []string{"", "..", "a/../../b", "x\x00"} {
		if _, err := p.DevicePath(byID, bad, nil); err == nil {
			t.Errorf("DevicePath(%q): no error", bad)
		}
	}
}
