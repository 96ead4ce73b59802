package csidriver_test

import (
	"crypto/rand"
	"encoding/binary"
	"maps"
	"strconv"
	"testing"

	"github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// csiSecret is the API client secret of the CSI tests' simulated
// Brightbox: no log line and no error may hold it.
const csiSecret = "csi-test-client-secret-3f9a1c"

// csiCloud is a simulated Brightbox for the CSI driver: the API and the
// metadata service of one server, the node the driver runs on.
type csiCloud struct {
	sim    *gbsim.Server
	server gbsim.CloudServer
	env    map[string]string
}

// newCSICloud starts gbsim with opts (its client secret csiSecret) and a
// server, and returns the environment that points the driver at them.
func newCSICloud(t testing.TB, opts gbsim.Options) *csiCloud {
	t.Helper()
	opts.ClientSecret = csiSecret
	s := gbsim.NewServer(t, opts)
	srv := s.AddServer(gbsim.CloudServer{Name: "node-1"})
	env := s.Env(s.URL())
	env["BRIGHTBOX_METADATA_URL"] = s.URL() + "/_sim/metadata/" + srv.ID
	return &csiCloud{sim: s, server: srv, env: env}
}

// provider returns a CSI provider configured at the cloud, with extra
// environment settings ("" unsets one).
func (c *csiCloud) provider(extra map[string]string) *csidriver.Driver {
	env := maps.Clone(c.env)
	for k, v := range extra {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return csidriver.NewWithEnv(env)
}

func (c *csiCloud) node() string { return c.server.ID }

// volume is the simulator's record of volume id.
func (c *csiCloud) volume(t testing.TB, id string) gbsim.Volume {
	t.Helper()
	for _, v := range c.sim.Volumes() {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no volume %s", id)
	return gbsim.Volume{}
}

// bbIDGen makes csi-sanity's IDs in Brightbox's formats: volume IDs
// vol-xxxxx, node IDs srv-xxxxx; the valid ones name nothing that
// exists (gbsim's IDs come from a counter, these from the top of the
// space).
type bbIDGen struct{}

func randomID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := 36*36*36*36*36 - 1 - binary.LittleEndian.Uint64(b[:])%(36*36*36*36)
	return prefix + strconv.FormatUint(n, 36)
}

func (bbIDGen) GenerateUniqueValidVolumeID() string { return randomID("vol-") }
func (bbIDGen) GenerateInvalidVolumeID() string     { return "not-a-volume-id" }
func (bbIDGen) GenerateUniqueValidNodeID() string   { return randomID("srv-") }
func (bbIDGen) GenerateInvalidNodeID() string       { return "not-a-server" }
