package csidriver_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// csiPassword is the password of the CSI tests' simulated OpenStack user:
// no log line and no error may hold it.
const csiPassword = "pw-csi-test-never-print-5b2e"

// csiCluster is the --cluster the tests' drivers run with.
const csiCluster = "test-cluster"

// csiCloud is a simulated OpenStack for the CSI driver: Keystone, Nova
// and Cinder, and the metadata service of one server, the node the
// driver runs on.
type csiCloud struct {
	sim    *openstacksim.Server
	server openstacksim.NovaServer
	env    map[string]string
}

// newCSICloud starts openstacksim with opts (one user, whose password is
// csiPassword) and a server, and returns the environment that points the
// node plugin at the server's metadata service (and at an empty config
// drive directory: the host's own config drive is never looked for).
func newCSICloud(t testing.TB, opts openstacksim.Options) *csiCloud {
	t.Helper()
	opts.Users = []openstacksim.User{{Name: "csi", Password: csiPassword, Domain: "Default", Project: "k8s"}}
	s := openstacksim.NewServer(t, opts)
	srv := s.AddServer(openstacksim.NovaServer{Name: "node-1"})
	return &csiCloud{sim: s, server: srv, env: map[string]string{
		"OS_METADATA_URL":     s.URL() + "/_sim/metadata/" + srv.ID,
		"OS_CONFIG_DRIVE_DIR": t.TempDir(),
	}}
}

// cloudConf writes the simulator's cloud.conf with extra appended and
// returns its path.
func (c *csiCloud) cloudConf(t testing.TB, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(path, []byte(c.sim.CloudConfig()+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// provider returns a CSI provider configured at the cloud with the
// cloud.conf plus extra, --cluster and args, as the binary parses them.
func (c *csiCloud) provider(t testing.TB, extra string, args ...string) *csidriver.Driver {
	t.Helper()
	args = append([]string{"--cloud-config", c.cloudConf(t, extra), "--cluster", csiCluster}, args...)
	return csitest.WithFlags(t, csidriver.NewWithEnv(c.env), args...)
}

func (c *csiCloud) node() string { return c.server.ID }

// volume is the simulator's volume id.
func (c *csiCloud) volume(t testing.TB, id string) openstacksim.Volume {
	t.Helper()
	for _, v := range c.sim.Volumes() {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no volume %s", id)
	return openstacksim.Volume{}
}

// osIDGen makes csi-sanity's IDs in OpenStack's formats: volume and node
// IDs are UUIDs; the valid ones name nothing that exists.
type osIDGen struct{}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (osIDGen) GenerateUniqueValidVolumeID() string { return newUUID() }
func (osIDGen) GenerateInvalidVolumeID() string     { return "not-a-volume-id" }
func (osIDGen) GenerateUniqueValidNodeID() string   { return newUUID() }
func (osIDGen) GenerateInvalidNodeID() string       { return "not-a-server" }
