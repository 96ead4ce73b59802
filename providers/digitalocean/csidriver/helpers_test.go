package csidriver_test

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// csiToken is the API token of the CSI tests' simulated DigitalOcean: no
// log line and no error may hold it.
const csiToken = "dop_v1_csi-test-token-6b0d9e2a7f31"

// csiCloud is a simulated DigitalOcean for the CSI driver: the API and the
// metadata service of one droplet, the node the driver runs on.
type csiCloud struct {
	sim     *dosim.Server
	droplet dosim.Droplet
	env     map[string]string
}

// newCSICloud starts dosim with opts (its token csiToken) and a droplet,
// and returns the environment that points the driver at them.
func newCSICloud(t testing.TB, opts dosim.Options) *csiCloud {
	t.Helper()
	opts.Token = csiToken
	s := dosim.NewServer(t, opts)
	d := s.AddDroplet(dosim.Droplet{Name: "node-1"})
	return &csiCloud{sim: s, droplet: d, env: map[string]string{
		"DIGITALOCEAN_ACCESS_TOKEN": csiToken,
		"DIGITALOCEAN_API_URL":      s.URL() + "/",
		"DIGITALOCEAN_METADATA_URL": s.URL() + "/_sim/metadata/" + strconv.Itoa(d.ID),
	}}
}

// provider returns a CSI provider configured at the cloud, with extra
// environment settings.
func (c *csiCloud) provider(extra map[string]string) *csidriver.Driver {
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	return csidriver.NewWithEnv(env)
}

func (c *csiCloud) node() string { return strconv.Itoa(c.droplet.ID) }

// doIDGen makes csi-sanity's IDs in DigitalOcean's formats: volume IDs are
// UUIDs, node IDs droplet IDs; the valid ones name nothing that exists.
type doIDGen struct{}

func random() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (doIDGen) GenerateUniqueValidVolumeID() string {
	n := random()
	return fmt.Sprintf("%08x-ffff-4000-8000-%012x", uint32(n), n>>16)
}
func (doIDGen) GenerateInvalidVolumeID() string { return "not-a-volume-id" }
func (doIDGen) GenerateUniqueValidNodeID() string {
	return strconv.FormatUint(900_000_000+random()%99_999_999, 10)
}
func (doIDGen) GenerateInvalidNodeID() string { return "not-a-droplet" }
