package csidriver_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// simCloud is a simulated Triton for the CSI driver: CloudAPI, and the
// instance metadata of one machine, the node the driver runs on, which a
// script answers as mdata-get does.
type simCloud struct {
	sim     *tritonsim.Server
	machine tritonsim.Machine
	env     map[string]string
	// secret is a line of the account key's PEM: no log line and no
	// error may hold it.
	secret string
}

// newSimCloud starts tritonsim with opts and a machine on the public and
// the default fabric network, and returns the environment that points
// the driver at them: the CloudAPI credentials, and TRITON_MDATA_GET, a
// script in a temporary directory that answers the machine's sdc:uuid
// and sdc:nics.
func newSimCloud(t testing.TB, opts tritonsim.Options) *simCloud {
	t.Helper()
	s := tritonsim.NewServer(t, opts)
	m := s.AddMachine(tritonsim.Machine{Name: "node-1"})
	env := s.Env(s.URL())
	mdata, err := s.MdataGet(t.TempDir(), m)
	if err != nil {
		t.Fatal(err)
	}
	env["TRITON_MDATA_GET"] = mdata
	lines := strings.Split(strings.TrimSpace(string(s.AccountKeyPEM())), "\n")
	return &simCloud{sim: s, machine: m, env: env, secret: lines[len(lines)/2]}
}

// provider returns a CSI provider configured at the cloud, with extra
// environment settings ("" unsets one).
func (c *simCloud) provider(extra map[string]string) *csidriver.Driver {
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

// fabric is the account's default fabric network, the machine's second
// NIC's.
func (c *simCloud) fabric() string { return c.machine.NICs[1].Network }

// volume is the simulator's record of volume id.
func (c *simCloud) volume(t testing.TB, id string) tritonsim.Volume {
	t.Helper()
	v, ok := c.sim.Volume(id)
	if !ok {
		t.Fatalf("no volume %s", id)
	}
	return v
}

// sdcNICs is machine m's sdc:nics.
func sdcNICs(s *tritonsim.Server, m tritonsim.Machine) []tritonsim.SDCNIC { return s.SDCNICs(m) }

// writeMdataGet writes a script that answers as mdata-get does (see
// tritonsim.WriteMdataGet). nics may be a []tritonsim.SDCNIC or raw text.
func writeMdataGet(t testing.TB, uuid string, nics any) string {
	t.Helper()
	raw, ok := nics.(string)
	if !ok {
		b, err := json.Marshal(nics)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	path, err := tritonsim.WriteMdataGet(t.TempDir(), uuid, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// tritonIDGen makes csi-sanity's IDs in Triton's formats: volume and
// instance IDs are UUIDs; the valid ones name nothing that exists.
type tritonIDGen struct{}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (tritonIDGen) GenerateUniqueValidVolumeID() string { return randomUUID() }
func (tritonIDGen) GenerateInvalidVolumeID() string     { return "not-a-volume-id" }
func (tritonIDGen) GenerateUniqueValidNodeID() string   { return randomUUID() }
func (tritonIDGen) GenerateInvalidNodeID() string       { return "not-an-instance" }
