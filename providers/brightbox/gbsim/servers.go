package gbsim

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// CloudServer is a cloud server as the simulator holds it. AddServer seeds one;
// the API renders it with its zone, server type, interface, cloud IPs and
// server groups.
type CloudServer struct {
	// ID is "srv-xxxxx"; "" gets a new one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is one of ServerStatuses; "" means active. A creating server
	// becomes active after Options.ProvisioningReads reads (or
	// Options.SettleAfter); a deleted one is listed for a while, as
	// DeleteServer leaves it; any other stays as it is.
	Status string `json:"status"`
	// Zone is the zone's handle (ZoneHandles); "" means DefaultZone.
	Zone string `json:"zone"`
	// Type is the server type's handle (ServerTypeHandles); "" means
	// DefaultServerType.
	Type string `json:"type"`
	// Interface is the network interface's ID ("int-xxxxx"); "" gets one.
	Interface string `json:"interface"`
	// IPv4 and IPv6 are the interface's addresses: a private IPv4 of
	// 10.240.0.0/12 and a public IPv6, numbered in the order servers are
	// added when "" (unique for half a million servers: the other
	// account's, OtherAccountServer, are numbered from 10.248.0.2 on).
	// "none" leaves one out.
	IPv4 string `json:"ipv4"`
	IPv6 string `json:"ipv6"`
	// Hostname is the ID when ""; FQDN is "<hostname>.gb1.brightbox.com"
	// when "".
	Hostname  string     `json:"hostname"`
	FQDN      string     `json:"fqdn"`
	Locked    bool       `json:"locked"`
	CreatedAt time.Time  `json:"created_at"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

func (c *CloudServer) clone() CloudServer { return *c }

// ZoneHandles are the zones the cloud has; the existing CCM derives the
// region by cutting the handle at its last "-" (gb1).
var ZoneHandles = []string{"gb1-a", "gb1-b"}

var zoneIDs = map[string]string{"gb1-a": "zon-328ds", "gb1-b": "zon-ggbkt"}

// serverType is a server type as the API serves it.
type serverType struct {
	ref
	Name        string `json:"name"`
	Status      string `json:"status"`
	Cores       int    `json:"cores"`
	RAM         int    `json:"ram"`
	DiskSize    int    `json:"disk_size"`
	Handle      string `json:"handle"`
	StorageType string `json:"storage_type"`
}

// serverTypes are the types the cloud offers, by handle.
var serverTypes = []serverType{
	{ref: ref{ID: "typ-zx45f"}, Name: "2GB SSD", Status: "available", Cores: 1, RAM: 2048, DiskSize: 51200, Handle: "2gb.ssd", StorageType: "local"},
	{ref: ref{ID: "typ-8fych"}, Name: "4GB SSD", Status: "available", Cores: 2, RAM: 4096, DiskSize: 81920, Handle: "4gb.ssd", StorageType: "local"},
	{ref: ref{ID: "typ-wusvn"}, Name: "8GB SSD", Status: "available", Cores: 4, RAM: 8192, DiskSize: 163840, Handle: "8gb.ssd", StorageType: "local"},
	{ref: ref{ID: "typ-1ibf3"}, Name: "4GB NBS", Status: "available", Cores: 2, RAM: 4096, DiskSize: 0, Handle: "4gb.nbs", StorageType: "network"},
	{ref: ref{ID: "typ-a8rbn"}, Name: "1GB SSD (legacy)", Status: "deprecated", Cores: 1, RAM: 1024, DiskSize: 30720, Handle: "1gb.ssd", StorageType: "local"},
}

// ServerTypeHandles are the server types' handles.
func ServerTypeHandles() []string {
	out := make([]string, 0, len(serverTypes))
	for _, t := range serverTypes {
		out = append(out, t.Handle)
	}
	return out
}

func findServerType(handle string) (serverType, bool) {
	i := slices.IndexFunc(serverTypes, func(t serverType) bool { return t.Handle == handle })
	if i < 0 {
		return serverType{}, false
	}
	return serverTypes[i], true
}

// AddServer creates a server from srv and returns it as stored; zero
// fields get the defaults their doc comments give. It panics on a status,
// zone or type the cloud does not know: a test's mistake. A new server
// joins the default server group.
func (s *Server) AddServer(srv CloudServer) CloudServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addServer(srv)
}

func (st *state) addServer(srv CloudServer) CloudServer {
	if srv.ID == "" {
		srv.ID = st.newID("srv")
	}
	if srv.Status == "" {
		srv.Status = StatusActive
	}
	if srv.Zone == "" {
		srv.Zone = DefaultZone
	}
	if srv.Type == "" {
		srv.Type = DefaultServerType
	}
	mustEnum("status", srv.Status, ServerStatuses)
	mustEnum("zone", srv.Zone, ZoneHandles)
	mustEnum("type", srv.Type, ServerTypeHandles())
	n := st.serverSeq + 2 // 10.240.0.2 is the first server's
	st.serverSeq++
	if srv.Interface == "" {
		srv.Interface = st.newID("int")
	}
	if srv.IPv4 == "" {
		srv.IPv4 = fmt.Sprintf("10.%d.%d.%d", 240+n/65536%16, n/256%256, n%256)
	}
	if srv.IPv6 == "" {
		srv.IPv6 = fmt.Sprintf("2a02:1348:17c:%x:%x::1", n/65536, n%65536)
	}
	if srv.Hostname == "" {
		srv.Hostname = srv.ID
	}
	if srv.FQDN == "" {
		srv.FQDN = srv.Hostname + ".gb1.brightbox.com"
	}
	if srv.CreatedAt.IsZero() {
		srv.CreatedAt = epoch
	}
	if _, existed := st.servers.Get(srv.ID); !existed {
		if def, ok := st.groups.Get(st.defaultGroup); ok {
			def.Servers = append(def.Servers, srv.ID)
		}
	}
	stored := srv
	st.servers.Put(srv.ID, &stored)
	st.retiring.Stop(srv.ID)
	switch stored.Status {
	case StatusCreating:
		st.settling.Start(srv.ID, func() { stored.Status = StatusActive })
	case StatusDeleted:
		st.settling.Stop(srv.ID)
		st.retire(srv.ID, func() { st.servers.Del(srv.ID) })
	default:
		st.settling.Stop(srv.ID)
	}
	return srv
}

func mustEnum(field, value string, allowed []string) {
	if err := enumError(field, value, allowed); err != nil {
		panic("gbsim: " + err.Error())
	}
}

// DeleteServer deletes a server as the cloud does: its status becomes
// deleted, it leaves its server groups and load balancers, its cloud IPs
// are unmapped, its volumes detached (deleted, with delete_with_server),
// and it stays listed for Options.DeletedReads list reads.
// It reports whether the server existed.
func (s *Server) DeleteServer(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.st.servers.Get(id)
	if ok && srv.Status != StatusDeleted {
		s.st.deleteServer(srv)
	}
	return ok
}

// deleteServer finishes a server's deletion (DeleteServer).
func (st *state) deleteServer(srv *CloudServer) {
	id := srv.ID
	now := st.now()
	st.settling.Stop(id)
	srv.Status, srv.DeletedAt = StatusDeleted, &now
	for _, g := range st.groups.All() {
		g.Servers = slices.DeleteFunc(g.Servers, func(x string) bool { return x == id })
	}
	for _, lb := range st.lbs.All() {
		lb.Nodes = slices.DeleteFunc(lb.Nodes, func(x string) bool { return x == id })
	}
	for _, c := range st.cips.All() {
		if c.Target == id || c.Target == srv.Interface {
			c.Target = ""
		}
	}
	st.releaseVolumes(id)
	st.retire(id, func() { st.servers.Del(id) })
}

// SetServerStatus sets a server's status (one of ServerStatuses) and
// reports whether the server exists.
func (s *Server) SetServerStatus(id, status string) bool {
	mustEnum("status", status, ServerStatuses)
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.st.servers.Get(id)
	if ok {
		s.st.settling.Stop(id)
		srv.Status = status
	}
	return ok
}

// Servers returns the servers, oldest first.
func (s *Server) Servers() []CloudServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.servers.All(), (*CloudServer).clone)
}

func (s *Server) listServers(r *http.Request) simkit.Response {
	v := s.view(r)
	out := []serverJSON{}
	for _, srv := range s.st.servers.All() {
		if s.st.listed(srv.ID) {
			s.st.settling.Read(srv.ID)
			out = append(out, v.server(srv))
		}
	}
	return ok(out)
}

func (s *Server) getServer(r *http.Request) simkit.Response {
	srv, found := s.st.servers.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	s.st.settling.Read(srv.ID)
	return ok(s.view(r).server(srv))
}

func (s *Server) lockServer(locked bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		srv, found := s.st.servers.Get(r.PathValue("id"))
		if !found {
			return notFound()
		}
		srv.Locked = locked
		return ok(s.view(r).server(srv))
	}
}

// getInterface serves GET /1.0/interfaces/{id}.
func (s *Server) getInterface(r *http.Request) simkit.Response {
	for _, srv := range s.st.servers.All() {
		if srv.Interface == r.PathValue("id") {
			v := s.view(r)
			iface := v.iface(srv)
			lite := v.serverLite(srv)
			iface.Server = &lite
			return ok(iface)
		}
	}
	return notFound()
}

func (s *Server) listZones(r *http.Request) simkit.Response {
	v := s.view(r)
	out := make([]zoneJSON, 0, len(ZoneHandles))
	for _, h := range ZoneHandles {
		out = append(out, v.zone(h))
	}
	return ok(out)
}

func (s *Server) getZone(r *http.Request) simkit.Response {
	for _, h := range ZoneHandles {
		if id := r.PathValue("id"); id == zoneIDs[h] || id == h {
			return ok(s.view(r).zone(h))
		}
	}
	return notFound()
}

func (s *Server) listServerTypes(r *http.Request) simkit.Response {
	v := s.view(r)
	out := make([]serverType, 0, len(serverTypes))
	for _, t := range serverTypes {
		out = append(out, v.serverType(t))
	}
	return ok(out)
}

func (s *Server) getServerType(r *http.Request) simkit.Response {
	for _, t := range serverTypes {
		if id := r.PathValue("id"); id == t.ID || id == t.Handle {
			return ok(s.view(r).serverType(t))
		}
	}
	return notFound()
}
