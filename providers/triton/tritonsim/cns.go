package tritonsim

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The CNS tags and metadata (triton-cns docs/metadata.md).
const (
	TagCNSServices   = "triton.cns.services"
	TagCNSDisable    = "triton.cns.disable"
	TagCNSReversePTR = "triton.cns.reverse_ptr"
	// MetadataCNSStatus is the metadata key ("up" or "down") that takes a
	// machine out of its service records, not its instance records.
	MetadataCNSStatus = "triton.cns.status"
)

// cnsService is one entry of triton.cns.services: a label and the port
// its SRV records carry (0: none).
type cnsService struct {
	Label string
	Port  int
}

var (
	dnsLabel  = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	optionKey = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// parseServices parses triton.cns.services by CNS's grammar:
//
//	service ("," service)*; service := dns-label (":" port)? (":" key "=" value)*
//
// with keys port, priority and weight.
func parseServices(v string) ([]cnsService, error) {
	var out []cnsService
	for entry := range strings.SplitSeq(v, ",") {
		parts := strings.Split(strings.TrimSpace(entry), ":")
		if !dnsLabel.MatchString(parts[0]) {
			return nil, fmt.Errorf("service %q is not a DNS label ([a-z][a-z0-9-]*, at most 63 characters)", parts[0])
		}
		svc := cnsService{Label: parts[0]}
		for i, p := range parts[1:] {
			key, value, isOption := strings.Cut(p, "=")
			if !isOption {
				key, value = "port", p
				if i > 0 {
					return nil, fmt.Errorf("service %q: %q must be key=value", parts[0], p)
				}
			}
			if !optionKey.MatchString(key) || !slices.Contains([]string{"port", "priority", "weight"}, key) {
				return nil, fmt.Errorf("service %q: unknown option %q", parts[0], key)
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || n > 65535 || key == "port" && n == 0 {
				return nil, fmt.Errorf("service %q: %s %q is not a number in range", parts[0], key, value)
			}
			if key == "port" {
				svc.Port = n
			}
		}
		out = append(out, svc)
	}
	return out, nil
}

// services are the machine's CNS services; a malformed tag (which the API
// refuses, but AddMachine may seed) gives none.
func services(m *Machine) []cnsService {
	v, _ := m.Tags[TagCNSServices].(string)
	if v == "" {
		return nil
	}
	svcs, err := parseServices(v)
	if err != nil {
		return nil
	}
	return svcs
}

// cnsDisabled: any triton.cns.disable value but false takes the machine
// out of CNS altogether.
func cnsDisabled(m *Machine) bool {
	v, set := m.Tags[TagCNSDisable]
	return set && v != false && v != "false"
}

// instanceListed reports whether CNS publishes the machine's instance
// records: not destroyed or failed, not disabled, and the account has CNS
// on (or the machine a reverse_ptr).
func (st *state) instanceListed(m *Machine) bool {
	if m.State == StateDeleted || m.State == StateFailed || cnsDisabled(m) {
		return false
	}
	_, ptr := m.Tags[TagCNSReversePTR].(string)
	return st.cnsEnabled || ptr
}

// serviceListed reports whether CNS publishes the machine in its service
// records: the account has CNS on, the machine is running, not disabled,
// and its triton.cns.status metadata, if any, is up.
func (st *state) serviceListed(m *Machine) bool {
	status, set := m.Metadata[MetadataCNSStatus]
	return st.cnsEnabled && m.State == StateRunning && !cnsDisabled(m) && (!set || status == "up")
}

// cnsZone is a CNS zone and whether it holds public or private NICs.
type cnsZone struct {
	name   string
	public bool
}

func (st *state) zones() []cnsZone {
	return []cnsZone{{st.opts.CNSPublicZone, true}, {st.opts.CNSPrivateZone, false}}
}

// zoneIPs are m's addresses a zone holds: its public NICs' or its private
// ones'.
func (st *state) zoneIPs(m *Machine, z cnsZone) []string {
	var out []string
	for _, nic := range m.NICs {
		if st.isPublic(nic.Network) == z.public {
			out = append(out, nic.IP)
		}
	}
	return out
}

// dnsNames are the CNS names of m, as GetMachine's dns_names lists them:
// per zone holding one of its NICs, its instance names and its services'
// names.
func (st *state) dnsNames(m *Machine) []string {
	names := []string{}
	if !st.instanceListed(m) {
		return names
	}
	for _, z := range st.zones() {
		if len(st.zoneIPs(m, z)) == 0 {
			continue
		}
		names = append(names, st.instName(m.ID, z), st.instName(m.Name, z))
		if st.cnsEnabled {
			for _, svc := range services(m) {
				names = append(names, fmt.Sprintf("%s.svc.%s.%s", svc.Label, st.accountID, z.name))
			}
		}
	}
	return slices.Compact(names)
}

func (st *state) instName(label string, z cnsZone) string {
	return fmt.Sprintf("%s.inst.%s.%s", strings.ToLower(label), st.accountID, z.name)
}

// SRV is a service record of a CNS service name.
type SRV struct {
	Target string `json:"target"`
	Port   int    `json:"port"`
}

// CNSRecords are what a CNS name resolves to.
type CNSRecords struct {
	Name string   `json:"name"`
	A    []string `json:"a"`
	SRV  []SRV    `json:"srv"`
	// Machines are the IDs of the machines behind the records.
	Machines []string `json:"machines"`
}

var errNotCNS = errors.New("not a name of this account's CNS zones")

// resolve answers a CNS name as CNS would: <label>.inst.<account-uuid>.<zone>
// or <label>.svc.<account-uuid>.<zone>.
func (st *state) resolve(name string) (CNSRecords, error) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	rec := CNSRecords{Name: name, A: []string{}, SRV: []SRV{}, Machines: []string{}}
	for _, z := range st.zones() {
		rest, inZone := strings.CutSuffix(name, "."+z.name)
		if !inZone {
			continue
		}
		parts := strings.Split(rest, ".")
		if len(parts) != 3 || parts[2] != st.accountID || parts[1] != "inst" && parts[1] != "svc" {
			return rec, errNotCNS
		}
		for _, m := range st.machines.All() {
			st.addRecords(&rec, m, z, parts[0], parts[1] == "svc")
		}
		slices.Sort(rec.A)
		slices.Sort(rec.Machines)
		return rec, nil
	}
	return rec, errNotCNS
}

// addRecords adds m's records for label in zone z to rec.
func (st *state) addRecords(rec *CNSRecords, m *Machine, z cnsZone, label string, service bool) {
	ips := st.zoneIPs(m, z)
	if len(ips) == 0 {
		return
	}
	if !service {
		if st.instanceListed(m) && (m.ID == label || strings.ToLower(m.Name) == label) {
			rec.A = append(rec.A, ips...)
			rec.Machines = append(rec.Machines, m.ID)
		}
		return
	}
	if !st.serviceListed(m) {
		return
	}
	joined := false
	for _, svc := range services(m) {
		if svc.Label != label {
			continue
		}
		joined = true
		if svc.Port > 0 {
			rec.SRV = append(rec.SRV, SRV{Target: st.instName(m.ID, z), Port: svc.Port})
		}
	}
	if joined {
		rec.A = append(rec.A, ips...)
		rec.Machines = append(rec.Machines, m.ID)
	}
}

// cnsIndex answers, as resolve does, which machines are behind CNS names,
// for many names at once: a service name from one index of every
// machine's services, made at the first (each of 5,000 nodes can be in
// 1,000 services: resolving each load balancer's name by reading every
// machine's services was 5 M entries a name). Its answers are shared:
// read-only.
type cnsIndex struct {
	st *state
	// services holds the machines of each service label of each zone,
	// sorted; nil until the first service name.
	services map[cnsLabel][]string
}

type cnsLabel struct{ zone, label string }

// machines are the IDs of the machines behind name, sorted.
func (x *cnsIndex) machines(name string) []string {
	lower := strings.TrimSuffix(strings.ToLower(name), ".")
	for _, z := range x.st.zones() {
		rest, inZone := strings.CutSuffix(lower, "."+z.name)
		if !inZone {
			continue
		}
		parts := strings.Split(rest, ".")
		if len(parts) != 3 || parts[1] != "svc" || parts[2] != x.st.accountID {
			break
		}
		if x.services == nil {
			x.services = x.st.serviceIndex()
		}
		return x.services[cnsLabel{z.name, parts[0]}]
	}
	if rec, _ := x.st.resolve(name); len(rec.Machines) > 0 {
		return rec.Machines
	}
	return nil
}

// serviceIndex is, per zone and service label, the machines that
// addRecords puts behind the service's name, sorted.
func (st *state) serviceIndex() map[cnsLabel][]string {
	idx := map[cnsLabel][]string{}
	for _, m := range st.machines.All() {
		if !st.serviceListed(m) {
			continue
		}
		svcs := services(m)
		for _, z := range st.zones() {
			if len(st.zoneIPs(m, z)) == 0 {
				continue
			}
			for _, svc := range svcs {
				k := cnsLabel{z.name, svc.Label}
				if ids := idx[k]; len(ids) == 0 || ids[len(ids)-1] != m.ID {
					idx[k] = append(ids, m.ID)
				}
			}
		}
	}
	for _, ids := range idx {
		slices.Sort(ids)
	}
	return idx
}

// Resolve returns the addresses a CNS name resolves to, sorted; none for
// a name that is not of the account's zones or has no live records.
func (s *Server) Resolve(name string) []string {
	return s.ResolveCNS(name).A
}

// ResolveCNS returns a CNS name's records: addresses, SRV targets and
// ports, and the machines behind them.
func (s *Server) ResolveCNS(name string) CNSRecords {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, _ := s.st.resolve(name)
	return rec
}

// serveCNS answers GET /_sim/cns?name=<fqdn>: the name's records, or 404
// for a name outside the account's CNS zones.
func (s *Server) serveCNS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rec, err := s.st.resolve(r.URL.Query().Get("name"))
	s.mu.Unlock()
	if err != nil {
		simkit.Write(w, r, fail(http.StatusNotFound, "%q: %s", r.URL.Query().Get("name"), err.Error()))
		return
	}
	simkit.WriteJSON(w, http.StatusOK, rec)
}
