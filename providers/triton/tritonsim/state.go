package tritonsim

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"net/netip"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// epoch is the creation time of resources seeded without one: fixed, so
// answers are deterministic.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// state is everything the cloud holds. The Server's mutex guards it.
type state struct {
	opts           Options
	accountID      string
	cnsEnabled     bool
	accountUpdated time.Time
	machines       *simkit.Table[Machine]
	networks       *simkit.Table[Network]
	packages       *simkit.Table[Package]
	images         *simkit.Table[Image]
	rules          *simkit.Table[FirewallRule]
	vlans          []VLAN
	// nextIP is the next address each network hands out.
	nextIP map[string]netip.Addr
	seq    int
	macSeq int
	// settling moves machines from provisioning to running, stopping to
	// stopped, and stopped (being started) to running.
	settling *simkit.Lifecycle
	// gone counts the GETs a deleted machine still answers 410 for.
	gone map[string]int
	// jobs finish the machines' actions whose change is made at once
	// (job): their audit records appear as they settle.
	jobs *simkit.Lifecycle
	// jobKeys are each machine's pending jobs' keys in jobs.
	jobKeys map[string][]string
	jobSeq  int
	// audits are each machine's finished actions, oldest first.
	audits map[string][]AuditRecord
	// keys are the account's keys, as ListKeys serves them, oldest first.
	keys []*Key
	// vols are the account's RFD 26 volumes.
	vols *volumeState
	now  func() time.Time
}

// numbering is where an account's counters start: its IDs (uuid), its
// MAC addresses (mac) and, when valid, its addresses on the public
// network. Triton's IDs and public addresses are unique across its
// accounts, so each account counts in a part of the space of its own; the
// first account's starts at zero, and at the public network's first
// address.
type numbering struct {
	seq, macSeq int
	publicIP    netip.Addr
}

// newState is an account's state; lock is the Server's mutex, which its
// Lifecycle's timers take (Options.SettleAfter).
func newState(opts Options, from numbering, lock sync.Locker) *state {
	st := &state{
		opts:       opts,
		seq:        from.seq,
		macSeq:     from.macSeq,
		cnsEnabled: !opts.CNSDisabled,
		machines:   simkit.NewTable[Machine](),
		networks:   simkit.NewTable[Network](),
		packages:   simkit.NewTable[Package](),
		images:     simkit.NewTable[Image](),
		rules:      simkit.NewTable[FirewallRule](),
		nextIP:     map[string]netip.Addr{},
		settling:   simkit.NewLifecycle(opts.ProvisioningReads).WithTime(opts.SettleAfter, lock),
		gone:       map[string]int{},
		jobs:       simkit.NewLifecycle(opts.ProvisioningReads).WithTime(opts.SettleAfter, lock),
		jobKeys:    map[string][]string{},
		audits:     map[string][]AuditRecord{},
		now:        func() time.Time { return opts.Now().UTC().Truncate(time.Second) },
		vols:       newVolumeState(opts, lock),
	}
	st.accountID = st.uuid("account")
	if opts.AccountID != "" {
		st.accountID = opts.AccountID
	}
	st.accountUpdated = epoch
	st.seedDefaults()
	if from.publicIP.IsValid() {
		for _, n := range st.networks.All() {
			if n.Public {
				st.nextIP[n.ID] = from.publicIP
			}
		}
	}
	return st
}

// uuid returns a UUID (version 4 in form) that follows from the seed, kind
// and a counter: the same run makes the same IDs.
func (st *state) uuid(kind string) string {
	st.seq++
	h := sha256.Sum256(fmt.Appendf(nil, "%d/%s/%d", st.opts.Seed, kind, st.seq))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// mac returns the next MAC address, in Triton's 90:b8:d0 range.
func (st *state) mac() string {
	st.macSeq++
	n := st.macSeq
	return fmt.Sprintf("90:b8:d0:%02x:%02x:%02x", n>>16&0xff, n>>8&0xff, n&0xff)
}

// Default networks' IDs, names and subnets.
const (
	PublicNetworkName = "Joyent-SDC-Public"
	FabricNetworkName = "My-Fabric-Network"
	defaultFabricVLAN = 2
)

// seedDefaults creates what every account has: the public network, the
// default fabric VLAN and network, the packages and images.
func (st *state) seedDefaults() {
	st.vlans = []VLAN{{ID: defaultFabricVLAN, Name: "My-Fabric-VLAN", Description: "Default fabric VLAN"}}
	// Ranges large enough for bench-sized clusters: 198.18.0.0/15 is the
	// benchmarking range, never routed.
	st.addNetwork(Network{Name: PublicNetworkName, Public: true, Description: "Public network",
		Subnet: "198.18.0.0/15", ProvisionStartIP: "198.18.0.10", ProvisionEndIP: "198.19.255.250",
		Gateway: "198.18.0.1", Resolvers: []string{"8.8.8.8", "8.8.4.4"}})
	st.addNetwork(Network{Name: FabricNetworkName, Fabric: true, VLAN: defaultFabricVLAN,
		Description: "Default fabric network", Subnet: "10.200.0.0/16", ProvisionStartIP: "10.200.0.5",
		ProvisionEndIP: "10.200.255.250", Gateway: "10.200.0.1", Resolvers: []string{"8.8.8.8", "8.8.4.4"},
		InternetNAT: true})
	for _, p := range defaultPackages {
		st.addPackage(p)
	}
	st.addImage(Image{Name: "base-64-lts", Version: "24.4.1", OS: "smartos", Type: "zone-dataset",
		Description: "A 64-bit SmartOS image with just essential packages installed."})
	if !st.opts.NoLoadBalancerImage {
		st.addImage(Image{Name: LoadBalancerImage, Version: "20250624T000000Z", OS: "smartos", Type: "zone-dataset",
			Description: "Triton Moirai: an HAProxy load balancer configured by instance metadata."})
	}
}

// defaultPackages are the packages of a Joyent public cloud account (a
// few of the g4 line).
var defaultPackages = []Package{
	{Name: "g4-highcpu-1G", Memory: 1024, Disk: 25600, Swap: 4096, LWPs: 4000, VCPUs: 1, Group: "High CPU", Default: true},
	{Name: "g4-highcpu-2G", Memory: 2048, Disk: 51200, Swap: 8192, LWPs: 4000, VCPUs: 2, Group: "High CPU"},
	{Name: "g4-highcpu-4G", Memory: 4096, Disk: 102400, Swap: 16384, LWPs: 4000, VCPUs: 4, Group: "High CPU"},
	{Name: "g4-general-8G", Memory: 8192, Disk: 245760, Swap: 32768, LWPs: 4000, VCPUs: 2, Group: "General"},
}

// allocateIP hands out the next free address of network n.
func (st *state) allocateIP(n *Network) (string, error) {
	next, ok := st.nextIP[n.ID]
	if !ok {
		start, err := netip.ParseAddr(n.ProvisionStartIP)
		if err != nil {
			return "", fmt.Errorf("network %s: provision_start_ip %q: %w", n.ID, n.ProvisionStartIP, err)
		}
		next = start
	}
	if end, err := netip.ParseAddr(n.ProvisionEndIP); err == nil && next.Compare(end) > 0 {
		return "", fmt.Errorf("network %s (%s) has no free address", n.Name, n.ID)
	}
	st.nextIP[n.ID] = next.Next()
	return next.String(), nil
}

// Snapshot is a copy of the cloud's state, as /_sim/state serves it.
type Snapshot struct {
	Account          string         `json:"account"`
	AccountID        string         `json:"account_id"`
	TritonCNSEnabled bool           `json:"triton_cns_enabled"`
	Machines         []Machine      `json:"machines"`
	Networks         []Network      `json:"networks"`
	Packages         []Package      `json:"packages"`
	Images           []Image        `json:"images"`
	FirewallRules    []FirewallRule `json:"fwrules"`
	Volumes          []Volume       `json:"volumes"`
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Account: s.opts.Account, AccountID: s.st.accountID, TritonCNSEnabled: s.st.cnsEnabled,
		Machines:      simkit.CloneAll(s.st.machines.All(), (*Machine).clone),
		Networks:      simkit.CloneAll(s.st.networks.All(), (*Network).clone),
		Packages:      simkit.CloneAll(s.st.packages.All(), func(p *Package) Package { return *p }),
		Images:        simkit.CloneAll(s.st.images.All(), func(i *Image) Image { return *i }),
		FirewallRules: simkit.CloneAll(s.st.rules.All(), func(r *FirewallRule) FirewallRule { return *r }),
		Volumes:       simkit.CloneAll(s.st.vols.volumes.All(), (*Volume).clone),
	}
}

// AccountID is the account's UUID, as CNS names hold it.
func (s *Server) AccountID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.accountID
}

// Advance settles every machine being provisioned, stopped, started or
// rebooted now, finishes every pending job (their audit records), and
// settles every volume being created or deleted.
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.settling.Advance()
	s.st.jobs.Advance()
	s.st.vols.settling.Advance()
}

// Purge drops a deleted machine's history now: GETs of it answer 404
// instead of 410. A machine not deleted is left alone.
func (s *Server) Purge(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.st.machines.Get(id); ok && m.State == StateDeleted {
		s.st.purge(id)
	}
}

func (st *state) purge(id string) {
	st.machines.Del(id)
	delete(st.gone, id)
	delete(st.audits, id)
	for _, key := range st.jobKeys[id] {
		st.jobs.Stop(key)
	}
	delete(st.jobKeys, id)
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}
