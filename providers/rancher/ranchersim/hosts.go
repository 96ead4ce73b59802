package ranchersim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Host is a Cattle host: a machine running the Rancher agent.
type Host struct {
	// ID is "1h<n>"; UUID the host's uuid (the old CCM's instance ID,
	// the provider's rancher://<uuid>).
	ID   string `json:"id"`
	UUID string `json:"uuid"`
	// Hostname is what the agent reported; Name the name a user gave
	// the host ("" when none: the API then shows null).
	Hostname string `json:"hostname"`
	Name     string `json:"name,omitempty"`
	// State is one of HostStates, or removing/removed; AgentState
	// follows it ("" means the one State implies).
	State      string `json:"state"`
	AgentState string `json:"agentState,omitempty"`
	// AgentIPAddress is the IP the agent registered with (the Node's
	// InternalIP); IPAddresses are the host's ipAddresses link, agent IP
	// first.
	AgentIPAddress string            `json:"agentIpAddress"`
	IPAddresses    []IPAddress       `json:"ipAddresses"`
	Labels         map[string]string `json:"labels,omitempty"`
	Info           map[string]any    `json:"info,omitempty"`
	PhysicalHostID string            `json:"physicalHostId,omitempty"`
	Created        time.Time         `json:"created"`
	Removed        *time.Time        `json:"removed,omitempty"`
}

// IPAddress is one of a host's IP addresses.
type IPAddress struct {
	// ID is "1ia<n>"; "" when seeding means one is given.
	ID      string `json:"id"`
	Address string `json:"address"`
	// Kind is the address's kind; "" means "ipAddress".
	Kind string `json:"kind,omitempty"`
	// Role is "primary" for the agent's address, "secondary" for others;
	// "" means by position.
	Role string `json:"role,omitempty"`
}

func (h *Host) clone() Host {
	c := *h
	c.IPAddresses = slices.Clone(h.IPAddresses)
	c.Labels = maps.Clone(h.Labels)
	c.Info = maps.Clone(h.Info)
	c.Removed = clonePtr(h.Removed)
	return c
}

// agentState is the agent's state for a host state.
func agentState(state string) string {
	switch state {
	case StateDisconnected, StateReconnecting:
		return state
	case StateRemoving, StateRemoved:
		return ""
	}
	return StateActive
}

// hostActions are the actions a host offers in state.
func hostActions(state string) []string {
	switch state {
	case StateActive:
		return []string{"deactivate", "update"}
	case StateInactive:
		return []string{"activate", "remove", "update"}
	case StateDisconnected:
		return []string{"deactivate", "remove", "update"}
	case StateReconnecting:
		return []string{"update"}
	}
	return nil
}

// hostAPI serves the hosts table.
var hostAPI = resources[Host]{typ: "host", table: func(st *state) *simkit.Table[Host] { return st.hosts },
	id: func(h *Host) string { return h.ID }, doc: func(v view, st *state, h *Host) any { return v.host(st, h) }}

func (s *Server) hostRoutes() {
	s.handle("GET "+projectPath+"/hosts", hostAPI.list(s))
	s.handle("GET "+projectPath+"/hosts/{id}", hostAPI.get(s))
	s.handle("PUT "+projectPath+"/hosts/{id}", s.updateHost)
	s.handle("DELETE "+projectPath+"/hosts/{id}", s.deleteHost)
	s.handle("POST "+projectPath+"/hosts/{id}", s.hostAction)
	s.handle("GET "+projectPath+"/hosts/{id}/ipaddresses", s.listHostIPAddresses)
	s.handle("GET "+projectPath+"/ipaddresses", s.listIPAddresses)
	s.handle("GET "+projectPath+"/ipaddresses/{id}", s.getIPAddress)
}

// hostDoc is a host as the API answers it (go-rancher's Host).
type hostDoc struct {
	resource
	Name                 *string           `json:"name"`
	Hostname             string            `json:"hostname"`
	Kind                 string            `json:"kind"`
	State                string            `json:"state"`
	AgentState           *string           `json:"agentState"`
	AgentIPAddress       string            `json:"agentIpAddress"`
	UUID                 string            `json:"uuid"`
	AccountID            string            `json:"accountId"`
	Description          *string           `json:"description"`
	Labels               map[string]string `json:"labels"`
	Info                 map[string]any    `json:"info"`
	PhysicalHostID       *string           `json:"physicalHostId"`
	PublicEndpoints      []endpointDoc     `json:"publicEndpoints"`
	Created              string            `json:"created"`
	CreatedTS            int64             `json:"createdTS"`
	Removed              *string           `json:"removed"`
	Transitioning        string            `json:"transitioning"`
	TransitioningMessage *string           `json:"transitioningMessage"`
	// IPAddresses is the ipAddresses link's data, embedded when the
	// request asks for ?include=ipAddresses; absent otherwise.
	IPAddresses *[]ipAddressDoc `json:"ipAddresses,omitempty"`
}

func (v view) host(st *state, h *Host) hostDoc {
	self := v.self("hosts", h.ID)
	d := hostDoc{
		resource: resource{ID: h.ID, Type: "host", BaseType: "host", Actions: actions(self, hostActions(h.State)...),
			Links: map[string]string{"self": self, "ipAddresses": self + "/ipaddresses"}},
		Name: nullable(h.Name), Hostname: h.Hostname, Kind: "host", State: h.State,
		AgentState: nullable(h.AgentState), AgentIPAddress: h.AgentIPAddress, UUID: h.UUID,
		AccountID: st.opts.Project, Labels: h.Labels, Info: h.Info, PhysicalHostID: nullable(h.PhysicalHostID),
		PublicEndpoints: v.hostEndpoints(st, h.ID),
		Created:         h.Created.Format(time.RFC3339), CreatedTS: h.Created.UnixMilli(),
		Removed: timestamp(h.Removed), Transitioning: transitioning(h.State),
		TransitioningMessage: transitioningMessage(h.State),
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if v.includes("host", "ipAddresses") {
		ips := make([]ipAddressDoc, 0, len(h.IPAddresses))
		for k := range h.IPAddresses {
			ips = append(ips, v.ipAddress(st, h, &h.IPAddresses[k]))
		}
		d.IPAddresses = &ips
	}
	return d
}

// nullable is s, or JSON null when s is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timestamp is t in RFC 3339, or JSON null.
func timestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(time.RFC3339)
	return &s
}

// readHost finds a host for a request and counts the read.
func (s *Server) readHost(r *http.Request) (*Host, bool) {
	id := r.PathValue("id")
	s.st.read(id)
	return s.st.hosts.Get(id)
}

// updateHost answers PUT: name, description and labels change; the
// fields the schema does not mark updatable are dropped.
func (s *Server) updateHost(r *http.Request) simkit.Response {
	h, found := s.st.hosts.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var in struct {
		Name   *string           `json:"name"`
		Labels map[string]string `json:"labels"`
	}
	if resp := decode(r, &in); resp != nil {
		return *resp
	}
	if in.Name != nil {
		h.Name = *in.Name
	}
	if in.Labels != nil {
		h.Labels = in.Labels
	}
	return ok(s.view(r).host(s.st, h))
}

// deleteHost answers DELETE: a host's removal, which it must be inactive
// (or disconnected) for.
func (s *Server) deleteHost(r *http.Request) simkit.Response {
	h, found := s.st.hosts.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if !slices.Contains(hostActions(h.State), "remove") {
		return fail(http.StatusConflict, "host %s is %s: deactivate it first", h.ID, h.State)
	}
	s.st.removeHost(h)
	return accepted(s.view(r).host(s.st, h))
}

// hostAction answers POST <host>?action=: activate, deactivate, remove,
// update.
func (s *Server) hostAction(r *http.Request) simkit.Response {
	h, found := s.st.hosts.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	name := r.URL.Query().Get("action")
	if resp, bad := checkAction(mustSchema("host"), hostActions(h.State), name); bad {
		return resp
	}
	switch name {
	case "activate":
		s.st.transition(h.ID, func(state string) { s.st.setHostState(h, state) }, StateActivating, StateActive)
	case "deactivate":
		s.st.transition(h.ID, func(state string) { s.st.setHostState(h, state) }, StateDeactivating, StateInactive)
	case "remove":
		s.st.removeHost(h)
	}
	return accepted(s.view(r).host(s.st, h))
}

// checkAction vets a POST ?action=name on a resource of type d offering
// available: no action is 405, one the type does not have 422
// InvalidAction, one the resource's state does not offer 422
// ActionNotAvailable.
func checkAction(d schemaDef, available []string, name string) (simkit.Response, bool) {
	switch {
	case name == "":
		return methodNotAllowed(), true
	case !hasAction(d, name):
		return invalid(codeInvalidAction, "action"), true
	case !slices.Contains(available, name):
		return invalid(codeActionNotAvail, "action"), true
	}
	return simkit.Response{}, false
}

func hasAction(d schemaDef, name string) bool {
	_, ok := d.actions[name]
	return ok
}

// transition puts a resource in the transitioning state via (set), to
// settle in to.
func (st *state) transition(id string, set func(string), via, to string) {
	set(via)
	st.life.Start(id, func() { set(to) })
}

func (st *state) setHostState(h *Host, state string) {
	h.State, h.AgentState = state, agentState(state)
}

// removeHost removes a host: removing, then removed (with its removed
// timestamp), then purged: gone from every answer (404).
func (st *state) removeHost(h *Host) {
	st.transition(h.ID, func(state string) {
		if state == StateRemoved {
			st.markHostRemoved(h)
			return
		}
		st.setHostState(h, state)
	}, StateRemoving, StateRemoved)
}

// markHostRemoved makes a host removed now, to be purged after its reads.
func (st *state) markHostRemoved(h *Host) {
	st.setHostState(h, StateRemoved)
	t := st.now()
	h.Removed = &t
	st.purge.Start(h.ID, func() { st.hosts.Del(h.ID) })
}

// ipAddressDoc is an IP address as the API answers it (go-rancher's
// IpAddress).
type ipAddressDoc struct {
	resource
	Address   string  `json:"address"`
	Kind      string  `json:"kind"`
	Role      string  `json:"role"`
	Name      *string `json:"name"`
	State     string  `json:"state"`
	UUID      string  `json:"uuid"`
	AccountID string  `json:"accountId"`
	HostID    string  `json:"hostId"`
	NetworkID *string `json:"networkId"`
	Removed   *string `json:"removed"`
	Created   string  `json:"created"`
}

func (v view) ipAddress(st *state, h *Host, ip *IPAddress) ipAddressDoc {
	self := v.self("ipaddresses", ip.ID)
	return ipAddressDoc{
		resource: resource{ID: ip.ID, Type: "ipAddress", BaseType: "ipAddress", Actions: map[string]string{},
			Links: map[string]string{"self": self, "hosts": v.self("hosts", h.ID)}},
		Address: ip.Address, Kind: ip.Kind, Role: ip.Role, State: StateActive, UUID: uuidFor(ip.ID),
		AccountID: st.opts.Project, HostID: h.ID, Created: h.Created.Format(time.RFC3339),
	}
}

// hostIP is an IP address with its host, for lists.
type hostIP struct {
	host *Host
	ip   *IPAddress
}

var ipFilters = mustSchema("ipAddress").filters

func (s *Server) listIPs(r *http.Request, hosts []*Host) simkit.Response {
	v := s.view(r)
	var items []*hostIP
	for _, h := range hosts {
		for i := range h.IPAddresses {
			items = append(items, &hostIP{host: h, ip: &h.IPAddresses[i]})
		}
	}
	return list(s, r, listing[hostIP]{
		typ: "ipAddress", items: items, id: func(x *hostIP) string { return x.ip.ID },
		doc: func(x *hostIP) any { return v.ipAddress(s.st, x.host, x.ip) }, filters: ipFilters,
	})
}

// listHostIPAddresses answers GET <host>/ipaddresses: the host's IP
// addresses (its ipAddresses link).
func (s *Server) listHostIPAddresses(r *http.Request) simkit.Response {
	h, found := s.readHost(r)
	if !found {
		return notFound()
	}
	return s.listIPs(r, []*Host{h})
}

func (s *Server) listIPAddresses(r *http.Request) simkit.Response {
	return s.listIPs(r, s.st.hosts.All())
}

func (s *Server) getIPAddress(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	for _, h := range s.st.hosts.All() {
		for i := range h.IPAddresses {
			if h.IPAddresses[i].ID == id {
				return ok(s.view(r).ipAddress(s.st, h, &h.IPAddresses[i]))
			}
		}
	}
	return notFound()
}

// AddHost adds a host, as if its agent had registered. Defaults: the ID
// "1h<n>", a UUID derived from it, Hostname "host-<n>", State active,
// AgentIPAddress 10.0.<n/240>.<n%240+10>, IPAddresses the agent IP
// (primary) and a public IP 203.0.113.<n> (secondary; an empty non-nil
// slice means none), Created now. It panics on a duplicate ID or an
// unknown state, as a test's mistake.
func (s *Server) AddHost(h Host) Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addHost(h)
}

func (st *state) addHost(h Host) Host {
	st.admit(prefixHost, &h.ID, &h.Created)
	n := st.seq[prefixHost]
	if h.UUID == "" {
		h.UUID = uuidFor(h.ID)
	}
	if h.Hostname == "" {
		h.Hostname = fmt.Sprintf("host-%d", n)
	}
	if h.State == "" {
		h.State = StateActive
	}
	if !slices.Contains(HostStates, h.State) {
		panic(fmt.Sprintf("ranchersim: host state %q is not one of %s", h.State, strings.Join(HostStates, ", ")))
	}
	if h.AgentState == "" {
		h.AgentState = agentState(h.State)
	}
	if h.AgentIPAddress == "" {
		h.AgentIPAddress = fmt.Sprintf("10.0.%d.%d", n/240, n%240+10)
	}
	if h.IPAddresses == nil {
		h.IPAddresses = []IPAddress{{Address: h.AgentIPAddress}, {Address: fmt.Sprintf("203.0.113.%d", n%250+1)}}
	}
	st.fillIPs(&h)
	h.Labels, h.Info = maps.Clone(h.Labels), maps.Clone(h.Info)
	st.hosts.Put(h.ID, &h)
	return h.clone()
}

// fillIPs gives a host's IP addresses their IDs, kinds and roles.
func (st *state) fillIPs(h *Host) {
	h.IPAddresses = slices.Clone(h.IPAddresses)
	for i := range h.IPAddresses {
		ip := &h.IPAddresses[i]
		if ip.ID == "" {
			ip.ID = st.newIPID()
		}
		if ip.Kind == "" {
			ip.Kind = "ipAddress"
		}
		if ip.Role == "" {
			ip.Role = "secondary"
			if i == 0 {
				ip.Role = "primary"
			}
		}
	}
}

// newIPID is the next IP address ID (they live in the hosts, not a
// table).
func (st *state) newIPID() string {
	st.seq[prefixIPAddress]++
	return fmt.Sprintf("%s%d", prefixIPAddress, st.seq[prefixIPAddress])
}

// Host returns a copy of the host with the ID.
func (s *Server) Host(id string) (Host, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.hosts, id, (*Host).clone)
}

// HostByHostname returns a copy of the (not removed) host with the
// hostname.
func (s *Server) HostByHostname(hostname string) (Host, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.st.hosts.Find(func(h *Host) bool { return h.Hostname == hostname && h.Removed == nil })
	if !found {
		return Host{}, false
	}
	return h.clone(), true
}

// Hosts returns copies of the hosts, oldest first (removed ones until
// they are purged).
func (s *Server) Hosts() []Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.hosts.All(), (*Host).clone)
}

// UpdateHost changes a host with change (its labels, addresses,
// state...), as its agent or a user would; the ID and UUID stay. It
// reports whether the host exists.
func (s *Server) UpdateHost(id string, change func(*Host)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.st.hosts.Get(id)
	if !found {
		return false
	}
	c := h.clone()
	change(&c)
	c.ID, c.UUID = h.ID, h.UUID
	s.st.fillIPs(&c)
	*h = c
	return true
}

// SetHostState puts a host in state (one of HostStates) at once, as its
// agent or a user would: inactive, disconnected...; its agentState
// follows. It reports whether the host exists.
func (s *Server) SetHostState(id, state string) bool {
	if !slices.Contains(HostStates, state) {
		panic(fmt.Sprintf("ranchersim: host state %q is not one of %s", state, strings.Join(HostStates, ", ")))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.st.hosts.Get(id)
	if found {
		s.st.life.Stop(id)
		s.st.setHostState(h, state)
	}
	return found
}

// SetHostLabels replaces a host's labels.
func (s *Server) SetHostLabels(id string, labels map[string]string) bool {
	return s.UpdateHost(id, func(h *Host) { h.Labels = maps.Clone(labels) })
}

// SetHostAddresses changes a host's agent IP and its IP addresses (the
// agent IP first, then others).
func (s *Server) SetHostAddresses(id, agentIP string, others ...string) bool {
	return s.UpdateHost(id, func(h *Host) {
		h.AgentIPAddress = agentIP
		h.IPAddresses = []IPAddress{{Address: agentIP}}
		for _, a := range others {
			h.IPAddresses = append(h.IPAddresses, IPAddress{Address: a})
		}
	})
}

// RemoveHost removes a host, whatever its state, as a user deleting it
// would: it is removed (state removed, with its removed timestamp, hidden
// by removed_null) at once, and purged (404) after
// Options.ProvisioningReads reads or on Advance.
func (s *Server) RemoveHost(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.st.hosts.Get(id)
	if found && h.Removed == nil {
		s.st.markHostRemoved(h)
	}
	return found
}

// PurgeHost deletes a host outright: every request for it answers 404.
func (s *Server) PurgeHost(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.life.Stop(id)
	s.st.purge.Stop(id)
	s.st.hosts.Del(id)
}
