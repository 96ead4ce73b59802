package tritonsim

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. The Triton provider is
// configured by its environment, and Triton has no route API.
type Cloud struct {
	*Server
	simkit.NoCloudConfig
	simkit.NoRoutes
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated Triton with c's settings (the defaults for
// the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance creates a running machine called name (DefaultPackage, a
// public and a fabric NIC) and returns its ID.
func (c *Cloud) AddInstance(name string) string {
	return c.AddMachine(Machine{Name: name}).ID
}

// DeleteInstance deletes a machine (410 Gone, then 404).
func (c *Cloud) DeleteInstance(id string) { c.DeleteMachine(id) }

// ShutdownInstance stops a machine (state stopped).
func (c *Cloud) ShutdownInstance(id string) { c.SetMachineState(id, StateStopped) }

// NewSecret returns a new key, which the account does not have yet, for
// RotateSecret (NewAccountKey): a Triton credential is a private key, not
// any string (frameworktest.SecretMinter).
func (c *Cloud) NewSecret() string { return string(NewAccountKey()) }

// RotateSecret makes key, in PKCS #1 PEM as NewSecret gives it, the
// account key (RotateAccountKey): the account accepts it from now on and
// no longer the old key, as after an operator adds the new public key to
// the account and removes the old one (frameworktest.SecretRotator). It
// panics if key is not an RSA key in PKCS #1 PEM.
func (c *Cloud) RotateSecret(key string) {
	if err := c.RotateAccountKey([]byte(key)); err != nil {
		panic("tritonsim: RotateSecret: " + err.Error())
	}
}

// Env is what the Triton provider needs to reach the cloud: TRITON_URL,
// TRITON_ACCOUNT, TRITON_KEY_ID (the MD5 fingerprint) and
// TRITON_KEY_MATERIAL (the PKCS #1 PEM).
func (c *Cloud) Env() map[string]string { return c.Server.Env(c.URL()) }

// OtherAccount implements simkit.Accounts with another account
// (OtherAccountServer): its login as TRITON_ACCOUNT, and its key's MD5
// fingerprint and PKCS #1 PEM as TRITON_KEY_ID and TRITON_KEY_MATERIAL
// (the PEM itself, even when Options.KeyFile keeps this account's on
// disk).
func (c *Cloud) OtherAccount() simkit.Credentials {
	o := c.OtherAccountServer()
	return simkit.Credentials{Env: map[string]string{
		"TRITON_ACCOUNT":      o.Account(),
		"TRITON_KEY_ID":       o.KeyFingerprint(),
		"TRITON_KEY_MATERIAL": string(o.AccountKeyPEM()),
	}}
}

// Moirai's metadata keys (triton-moirai src/lib.rs).
const (
	MetadataLoadBalancer = "cloud.tritoncompute:loadbalancer"
	MetadataPortmap      = "cloud.tritoncompute:portmap"
)

// LoadBalancers lists the Moirai load balancers: the machines not deleted
// whose cloud.tritoncompute:loadbalancer metadata is true, oldest first.
// Listeners come from their portmap ("tcp://80:<backend>:30080" is
// "TCP:80->:30080"; http is HTTP, the https types HTTPS, tcp-proxy-v2
// TCP), members are the machines each backend CNS name resolves to, by
// ID, sorted. Addresses are what the provider reports once the machine is
// provisioned: its primaryIp and, beside it, the CNS name of the first
// service of its triton.cns.services tag in the account's public CNS
// zone.
//
// A Service in CNS mode has no load balancer of its own here: its
// "load balancer" (ID cns:<label>) is a triton.cns.services entry on the
// nodes, which no cloud object holds.
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := &cnsIndex{st: c.st}
	var out []simkit.LoadBalancer
	for _, m := range c.st.machines.All() {
		if m.State == StateDeleted || !strings.EqualFold(m.Metadata[MetadataLoadBalancer], "true") {
			continue
		}
		lb := simkit.LoadBalancer{ID: m.ID, Name: m.Name}
		var backends []string
		for _, e := range parsePortmap(m.Metadata[MetadataPortmap]) {
			lb.Listeners = append(lb.Listeners, simkit.FormatListener(e.protocol(), e.listen, e.backendPort))
			backends = append(backends, e.backend)
		}
		slices.Sort(lb.Listeners)
		slices.Sort(backends)
		backends = slices.Compact(backends)
		if len(backends) == 1 {
			lb.Members = names.machines(backends[0])
		} else {
			var members []string
			for _, b := range backends {
				members = append(members, names.machines(b)...)
			}
			slices.Sort(members)
			lb.Members = slices.Compact(members)
		}
		lb.Addresses = c.st.applianceAddresses(m)
		out = append(out, lb)
	}
	return out
}

// applianceAddresses are where clients reach a Moirai appliance, sorted:
// none while it is provisioning.
func (st *state) applianceAddresses(m *Machine) []string {
	ip := st.primaryIP(m)
	if ip == "" || m.State == StateProvisioning {
		return nil
	}
	out := []string{ip}
	tag, _ := m.Tags[TagCNSServices].(string)
	for entry := range strings.SplitSeq(tag, ",") {
		if label, _, _ := strings.Cut(entry, ":"); strings.TrimSpace(label) != "" {
			out = append(out, strings.TrimSpace(label)+".svc."+st.accountID+"."+st.opts.CNSPublicZone)
			break
		}
	}
	slices.Sort(out)
	return out
}

// portmapEntry is one service designation of a Moirai portmap:
// <type>://<listen>:<backend>[:<port>][{options}].
type portmapEntry struct {
	typ         string
	listen      int
	backend     string
	backendPort int
}

// protocol is the entry's protocol as simkit.FormatListener writes it.
func (e portmapEntry) protocol() string {
	switch {
	case e.typ == "http":
		return "HTTP"
	case strings.HasPrefix(e.typ, "https"):
		return "HTTPS"
	}
	return "TCP"
}

// parsePortmap reads a portmap: entries separated by commas or spaces
// (not those inside an entry's {options}); malformed entries are skipped,
// as Moirai's reconfigure skips them.
func parsePortmap(v string) []portmapEntry {
	var out []portmapEntry
	for _, raw := range splitPortmap(v) {
		typ, rest, found := strings.Cut(raw, "://")
		if !found {
			continue
		}
		if i := strings.IndexByte(rest, '{'); i >= 0 {
			rest = rest[:i]
		}
		parts := strings.Split(rest, ":")
		if len(parts) < 2 || len(parts) > 3 {
			continue
		}
		listen, err := strconv.Atoi(parts[0])
		if err != nil {
			continue
		}
		e := portmapEntry{typ: strings.ToLower(typ), listen: listen, backend: parts[1]}
		if len(parts) == 3 {
			if e.backendPort, err = strconv.Atoi(parts[2]); err != nil {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

func splitPortmap(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range v + "," {
		switch {
		case r == '{':
			depth++
		case r == '}':
			depth--
		case (r == ',' || r == ' ') && depth <= 0:
			if s := strings.TrimSpace(v[start:min(i, len(v))]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}
