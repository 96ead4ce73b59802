package tritonsim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Machine states, as CloudAPI translates VMAPI's (triton-rancher.md §5).
const (
	StateProvisioning = "provisioning"
	StateRunning      = "running"
	StateStopping     = "stopping"
	StateStopped      = "stopped"
	StateOffline      = "offline"
	StateFailed       = "failed"
	StateDeleted      = "deleted"
)

// States are the machine states CloudAPI reports.
var States = []string{StateProvisioning, StateRunning, StateStopping, StateStopped, StateOffline, StateFailed, StateDeleted, "ready", "unknown"}

// Machine is a machine (instance) as the simulator holds it; its JSON
// adds type, ips, networks, primaryIp and dns_names, derived from it.
type Machine struct {
	ID                 string            `json:"id"`
	Name               string            `json:"name"`
	Brand              string            `json:"brand"`
	State              string            `json:"state"`
	Image              string            `json:"image"`
	Package            string            `json:"package"`
	Memory             int               `json:"memory"`
	Disk               int               `json:"disk"`
	Metadata           map[string]string `json:"metadata"`
	Tags               map[string]any    `json:"tags"`
	Created            time.Time         `json:"created"`
	Updated            time.Time         `json:"updated"`
	Docker             bool              `json:"docker"`
	FirewallEnabled    bool              `json:"firewall_enabled"`
	DeletionProtection bool              `json:"deletion_protection"`
	ComputeNode        string            `json:"compute_node"`
	NICs               []NIC             `json:"nics"`
}

func (m *Machine) clone() Machine {
	c := *m
	c.Metadata, c.Tags, c.NICs = cloneMap(m.Metadata), cloneMap(m.Tags), slices.Clone(m.NICs)
	return c
}

// AddMachine adds a machine, as if created earlier, and returns it. Unset
// fields get defaults: a generated ID, the name "machine-<n>", state
// running, DefaultPackage (its memory and disk), the base image, brand
// joyent, a compute node, and one NIC on the public network and one on
// the default fabric network; a NIC with only its Network set gets an
// address, MAC and the network's netmask and gateway (the first NIC is
// primary). It panics on an unknown package, image or network: a test's
// mistake.
func (s *Server) AddMachine(m Machine) Machine {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.st.addMachine(m)
	if err != nil {
		panic("tritonsim: " + err.Error())
	}
	return out.clone()
}

func (st *state) addMachine(m Machine) (*Machine, error) {
	if m.ID == "" {
		m.ID = st.uuid("machine")
	}
	if m.Name == "" {
		m.Name = "machine-" + strconv.Itoa(st.machines.Len()+1)
	}
	if m.State == "" {
		m.State = StateRunning
	}
	if m.Brand == "" {
		m.Brand = "joyent"
	}
	if err := st.fillCatalog(&m); err != nil {
		return nil, err
	}
	if m.Created.IsZero() {
		m.Created = st.now()
	}
	if m.Updated.IsZero() {
		m.Updated = m.Created
	}
	if m.ComputeNode == "" {
		m.ComputeNode = st.computeNode(st.machines.Len())
	}
	m.Metadata, m.Tags = cloneMap(m.Metadata), cloneMap(m.Tags)
	if len(m.NICs) == 0 {
		for _, n := range st.defaultNetworks() {
			m.NICs = append(m.NICs, NIC{Network: n.ID})
		}
	}
	if err := st.fillNICs(m.NICs); err != nil {
		return nil, err
	}
	st.machines.Put(m.ID, &m)
	if m.State == StateDeleted {
		st.destroy(&m)
	}
	return &m, nil
}

// fillCatalog resolves m's package (name or ID) and image, and takes the
// memory and disk from the package.
func (st *state) fillCatalog(m *Machine) error {
	p, found := st.pkg(cmpOr(m.Package, DefaultPackage))
	if !found {
		return fmt.Errorf("package %q does not exist", m.Package)
	}
	m.Package = p.Name
	if m.Memory == 0 {
		m.Memory, m.Disk = int(p.Memory), int(p.Disk)
	}
	if m.Image == "" {
		m.Image = st.images.All()[0].ID
	}
	if _, found := st.images.Get(m.Image); !found {
		return fmt.Errorf("image %q does not exist", m.Image)
	}
	return nil
}

// fillNICs gives NICs with only a network an address, MAC, netmask and
// gateway; the first is primary unless one is.
func (st *state) fillNICs(nics []NIC) error {
	primary := slices.ContainsFunc(nics, func(n NIC) bool { return n.Primary })
	for i := range nics {
		nic := &nics[i]
		n, found := st.network(nic.Network)
		if !found {
			return fmt.Errorf("network %q does not exist", nic.Network)
		}
		nic.Network = n.ID
		if nic.IP == "" {
			ip, err := st.allocateIP(n)
			if err != nil {
				return err
			}
			nic.IP = ip
		}
		if nic.MAC == "" {
			nic.MAC = st.mac()
		}
		nic.Netmask, nic.Gateway = cmpOr(nic.Netmask, n.netmask()), cmpOr(nic.Gateway, n.Gateway)
		nic.State = cmpOr(nic.State, StateRunning)
		if !primary && i == 0 {
			nic.Primary = true
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// computeNode is the compute node of the i-th machine: machines are
// spread over Options.ComputeNodes servers.
func (st *state) computeNode(i int) string {
	n := i % st.opts.ComputeNodes
	return fmt.Sprintf("44454c4c-%04x-1000-8000-%012x", n, st.opts.Seed&0xffffffffffff)
}

// DeleteMachine deletes a machine: GETs of it answer 410 Gone with state
// deleted (Options.GoneReads of them), then 404.
func (s *Server) DeleteMachine(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, found := s.st.machines.Get(id); found {
		s.st.destroy(m)
	}
}

func (st *state) destroy(m *Machine) {
	st.settling.Stop(m.ID)
	st.dropVolumeRefs(m.ID)
	m.State, m.Updated = StateDeleted, st.now()
	if st.opts.GoneReads < 0 {
		st.purge(m.ID)
		return
	}
	st.gone[m.ID] = st.opts.GoneReads
}

// SetMachineState sets a machine's state by hand (offline, failed,
// stopped...), settling nothing it had pending; deleted is DeleteMachine.
func (s *Server) SetMachineState(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, found := s.st.machines.Get(id)
	switch {
	case !found:
	case state == StateDeleted:
		s.st.destroy(m)
	default:
		s.st.settling.Stop(id)
		m.State, m.Updated = state, s.st.now()
	}
}

// Machine returns the machine with the ID (deleted ones too, until
// purged).
func (s *Server) Machine(id string) (Machine, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, found := s.st.machines.Get(id)
	if !found {
		return Machine{}, false
	}
	return m.clone(), true
}

// Machines returns every machine, deleted ones not yet purged included,
// oldest first.
func (s *Server) Machines() []Machine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.machines.All(), (*Machine).clone)
}

// SetMetadata sets (or, with value "", removes) a machine's metadata key,
// as the machine itself or an operator would.
func (s *Server) SetMetadata(id, key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, found := s.st.machines.Get(id); found {
		if value == "" {
			delete(m.Metadata, key)
		} else {
			m.Metadata[key] = value
		}
		m.Updated = s.st.now()
	}
}

// filterMachines returns the machines not deleted that match r's filters:
// each field filter and every tag.<key>=<value> (an exact match with the
// tag's value as a string).
func (st *state) filterMachines(r *http.Request) []*Machine {
	q := r.URL.Query()
	tags := map[string]string{}
	for k, v := range q {
		if key, isTag := strings.CutPrefix(k, "tag."); isTag {
			tags[key] = v[0]
		}
	}
	var out []*Machine
	for _, m := range st.machines.All() {
		if m.State == StateDeleted && q.Get("tombstone") != "true" {
			continue
		}
		fields := map[string]string{"name": m.Name, "state": m.State, "brand": m.Brand, "image": m.Image,
			"memory": strconv.Itoa(m.Memory), "type": machineType(m.Brand)}
		if !matches(q, fields) || !tagsMatch(m.Tags, tags) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func tagsMatch(have map[string]any, want map[string]string) bool {
	for k, v := range want {
		got, set := have[k]
		if !set || fmt.Sprint(got) != v {
			return false
		}
	}
	return true
}

// listMachines serves ListMachines: a bare array of at most limit (1000,
// the default and the maximum) machines from offset, with the total in
// X-Resource-Count. Each machine listed counts as a read of it.
func (s *Server) listMachines(r *http.Request) simkit.Response {
	all := s.st.filterMachines(r)
	page, err := simkit.PageByOffset(r, len(all), simkit.OffsetPages{Default: 1000, Max: 1000})
	if err != nil {
		return invalid("%s", err.Error())
	}
	out := make([]machineJSON, 0, page.End-page.Start)
	for _, m := range all[page.Start:page.End] {
		s.st.read(m.ID)
		out = append(out, s.st.machineJSON(m))
	}
	resp := ok(out)
	resp.Header = http.Header{"X-Resource-Count": {strconv.Itoa(len(all))}}
	return resp
}

// countMachines serves HEAD /{account}/machines: X-Resource-Count and no
// body.
func (s *Server) countMachines(r *http.Request) simkit.Response {
	return simkit.Response{Status: http.StatusOK,
		Header: http.Header{"X-Resource-Count": {strconv.Itoa(len(s.st.filterMachines(r)))}}}
}

// getMachine serves GetMachine: 200, or 410 Gone with the machine (state
// deleted) for a deleted one until its history is purged, then 404.
func (s *Server) getMachine(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	m, found := s.st.machines.Get(id)
	if !found {
		return notFound("VM", id)
	}
	if m.State == StateDeleted {
		body := s.st.machineJSON(m)
		if s.st.gone[id]--; s.st.gone[id] <= 0 {
			s.st.purge(id)
		}
		return simkit.JSON(http.StatusGone, body)
	}
	s.st.read(id)
	return ok(s.st.machineJSON(m))
}

// liveMachine is the machine a sub-resource request names: 404 for an
// unknown one, 410 for a deleted one.
func (s *Server) liveMachine(r *http.Request) (*Machine, *simkit.Response) {
	id := r.PathValue("id")
	m, found := s.st.machines.Get(id)
	if !found {
		resp := notFound("VM", id)
		return nil, &resp
	}
	if m.State == StateDeleted {
		resp := fail(http.StatusGone, "VM %s has been deleted", id)
		return nil, &resp
	}
	return m, nil
}

// touch records a change to m.
func (st *state) touch(m *Machine) { m.Updated = st.now() }

// sortedKeys is used by views for deterministic output.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
