package csidriver_test

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ccmkit/ccmkit/providers/rancher/csidriver"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// csiSecret is the secret key of the CSI tests' simulated environment: no
// log line and no error may hold it.
const csiSecret = "csi-test-cattle-secret-7c2e41"

// csiCloud is a simulated Rancher environment for the CSI driver: the
// Cattle API with the rancher-nfs (multi-host) and rancher-ebs
// (single-host) storage drivers, and hosts node-1, node-2, ..., each with
// a directory of its own for its volume plugins' sockets and mounts
// (started by plugins).
type csiCloud struct {
	sim   *ranchersim.Server
	dir   string
	hosts []ranchersim.Host
	env   map[string]string
}

// newCSICloud starts ranchersim with opts (its secret key csiSecret), the
// two storage drivers and n hosts; the environment points the driver at
// it as node-1.
func newCSICloud(t testing.TB, opts ranchersim.Options, n int) *csiCloud {
	t.Helper()
	opts.SecretKey = csiSecret
	s := ranchersim.NewServer(t, opts)
	s.AddStorageDriver(ranchersim.RancherNFS())
	s.AddStorageDriver(ranchersim.RancherEBS())
	// A short directory: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "rcsi") //nolint:usetesting // t.TempDir() holds the test name: too long for a socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c := &csiCloud{sim: s, dir: dir}
	for i := range n {
		c.hosts = append(c.hosts, s.AddHost(ranchersim.Host{Hostname: fmt.Sprintf("node-%d", i+1)}))
	}
	c.env = s.Env(s.URL())
	maps.Copy(c.env, c.nodeEnv(0))
	return c
}

// nodeEnv is the node plugin's settings on host i: its node name and its
// host's plugin directory.
func (c *csiCloud) nodeEnv(i int) map[string]string {
	return map[string]string{"NODE_NAME": c.hosts[i].Hostname, "RANCHER_VOLUME_PLUGIN_DIR": c.pluginDir(i)}
}

func (c *csiCloud) pluginDir(i int) string {
	return filepath.Join(c.dir, c.hosts[i].Hostname, "plugins")
}

// plugin starts driver's volume plugin on host i (real bind mounts unless
// noMount), its share the cloud's for that driver, and stops it when the
// test ends.
func (c *csiCloud) plugin(t testing.TB, i int, driver string, noMount bool) *ranchersim.VolumePlugin {
	t.Helper()
	p, err := c.sim.StartVolumePlugin(ranchersim.VolumePluginOptions{
		Driver: driver, HostID: c.hosts[i].ID, SocketDir: c.pluginDir(i), ExportDir: filepath.Join(c.dir, "share-"+driver),
		MountRoot: filepath.Join(c.dir, c.hosts[i].Hostname, "volumes"), NoMount: noMount,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("stopping the %s plugin of %s: %v", driver, c.hosts[i].Hostname, err)
		}
	})
	return p
}

// provider returns a CSI provider configured at the cloud as host i's,
// with extra environment settings ("" unsets one).
func (c *csiCloud) provider(i int, extra map[string]string) *csidriver.Driver {
	env := maps.Clone(c.env)
	maps.Copy(env, c.nodeEnv(i))
	for k, v := range extra {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return csidriver.NewWithEnv(env)
}

// volume is the simulator's record of the volume with the CSI ID id.
func (c *csiCloud) volume(t testing.TB, id string) ranchersim.Volume {
	t.Helper()
	cattleID, _, _, ok := csidriver.ParseVolumeID(id)
	if !ok {
		t.Fatalf("%q is not a volume ID", id)
	}
	v, found := c.sim.Volume(cattleID)
	if !found {
		t.Fatalf("no volume %s", cattleID)
	}
	return v
}

// live are the volumes not removed.
func (c *csiCloud) live() []ranchersim.Volume {
	var out []ranchersim.Volume
	for _, v := range c.sim.Volumes() {
		if v.Removed == nil && v.State != ranchersim.StateRemoving {
			out = append(out, v)
		}
	}
	return out
}

// cattleIDGen makes csi-sanity's IDs in the driver's formats: volume IDs
// <Cattle ID>/<driver>/<name> whose Cattle ID no volume has (ranchersim's
// come from a counter, these from the top of the space), node IDs
// Kubernetes node names.
type cattleIDGen struct{}

func randomN() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (cattleIDGen) GenerateUniqueValidVolumeID() string {
	return "1v" + strconv.FormatUint(900000000+randomN()%100000000, 10) + "/rancher-nfs/sanity-missing-" + strconv.FormatUint(randomN()%1e9, 36)
}
func (cattleIDGen) GenerateInvalidVolumeID() string { return "not-a-volume-id" }
func (cattleIDGen) GenerateUniqueValidNodeID() string {
	return "node-" + strconv.FormatUint(randomN()%1e9, 36)
}
func (cattleIDGen) GenerateInvalidNodeID() string { return "Not A Node!" }
