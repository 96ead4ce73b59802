package openstacksim

import (
	"fmt"
	"maps"
	"slices"
)

// Nova server statuses.
const (
	StatusActive  = "ACTIVE"
	StatusBuild   = "BUILD"
	StatusShutoff = "SHUTOFF"
	StatusError   = "ERROR"
	StatusPaused  = "PAUSED"
)

// NovaServer is a Nova server (instance) as tests add and see it.
type NovaServer struct {
	// ID defaults to a generated one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is ACTIVE (default), SHUTOFF, BUILD, ERROR, PAUSED, ….
	Status string `json:"status"`
	// Flavor is a flavor ID or name; "" means m1.small.
	Flavor string `json:"flavor"`
	// Image is an image ID or name; "" means the first of Images.
	Image string `json:"image,omitempty"`
	// AZ is the availability zone; "" means "nova". A server created in
	// a zone it was given is pinned to it (pinned_availability_zone).
	AZ         string            `json:"availability_zone"`
	Tags       []string          `json:"tags,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	AccessIPv4 string            `json:"accessIPv4,omitempty"`
	AccessIPv6 string            `json:"accessIPv6,omitempty"`
	// Ports are the server's network interfaces; none means one on the
	// default network. AddServer fills in what it allocated.
	Ports []ServerPort `json:"ports"`
	// TaskState is the task under way (powering-off, powering-on,
	// deleting: see nova_tasks.go), "" for none; AddServer ignores it.
	TaskState string `json:"task_state,omitempty"`
}

// ServerPort is a network interface of a NovaServer: a Neutron port with
// device_id the server's ID and device_owner compute:<AZ>.
type ServerPort struct {
	// ID is the Neutron port's ID (filled in by AddServer).
	ID string `json:"id"`
	// Network is a network ID or name; "" means the default network.
	Network string `json:"network"`
	// FixedIPs are the port's addresses; none means the next free one on
	// the network's first IPv4 subnet (and IPv6 subnet, if it has one).
	FixedIPs []string `json:"fixed_ips"`
	// FloatingIP, when not "", associates a floating IP from the default
	// floating network: "auto" for the next free address, or an address.
	FloatingIP string `json:"floating_ip,omitempty"`
	MACAddress string `json:"mac_address,omitempty"`
}

type serverRec struct {
	NovaServer
	flavorID, imageID string
	// project owns the server; pinnedAZ is the zone asked for, if any.
	project, pinnedAZ string
}

func (v NovaServer) clone() NovaServer {
	v.Tags, v.Metadata, v.Ports = slices.Clone(v.Tags), maps.Clone(v.Metadata), slices.Clone(v.Ports)
	for i := range v.Ports {
		v.Ports[i].FixedIPs = slices.Clone(v.Ports[i].FixedIPs)
	}
	return v
}

// AddServer adds a server with its ports (and floating IPs) and returns
// it as stored. It panics on unknown flavors, networks or addresses: it
// is for test setup.
func (s *Server) AddServer(v NovaServer) NovaServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.addServer(v)
	if err != nil {
		panic("openstacksim.AddServer: " + err.Error())
	}
	return v
}

func (s *Server) addServer(v NovaServer) (NovaServer, error) {
	v = v.clone()
	fl, ok := s.st.flavorByRef(cmpOr(v.Flavor, "m1.small"))
	if !ok {
		return NovaServer{}, fmt.Errorf("unknown flavor %q", v.Flavor)
	}
	imgRef := v.Image
	if all := s.st.images.All(); imgRef == "" && len(all) > 0 {
		imgRef = all[0].ID
	}
	img, ok := s.imageByRef(imgRef)
	if !ok {
		return NovaServer{}, fmt.Errorf("unknown image %q", v.Image)
	}
	pinnedAZ := v.AZ
	if v.ID == "" {
		v.ID = s.st.newID(kServer)
	}
	if _, dup := s.st.servers.Get(v.ID); dup {
		return NovaServer{}, fmt.Errorf("server %s exists", v.ID)
	}
	v.Flavor, v.Image, v.Status, v.AZ = fl.Name, img.ID, cmpOr(v.Status, StatusActive), cmpOr(v.AZ, "nova")
	v.TaskState = ""
	if len(v.Ports) == 0 {
		v.Ports = []ServerPort{{}}
	}
	for i := range v.Ports {
		if err := s.addServerPort(&v, &v.Ports[i]); err != nil {
			return NovaServer{}, err
		}
	}
	s.st.servers.Put(v.ID, &serverRec{NovaServer: v.clone(), flavorID: fl.ID, imageID: img.ID, project: s.st.projectID, pinnedAZ: pinnedAZ})
	return v, nil
}

func (s *Server) addServerPort(v *NovaServer, sp *ServerPort) error {
	netID := s.networkByRef(cmpOr(sp.Network, s.st.defaults.NetworkID))
	if netID == "" {
		return fmt.Errorf("server %s: no network %q", v.Name, sp.Network)
	}
	var want []FixedIP
	for _, ip := range sp.FixedIPs {
		want = append(want, FixedIP{IPAddress: ip})
	}
	if len(want) == 0 {
		for _, ver := range []int{4, 6} {
			if sr := s.st.firstSubnet(netID, ver); sr != nil {
				want = append(want, FixedIP{SubnetID: sr.ID})
			}
		}
	}
	p, errResp := s.newPort(Port{ID: sp.ID, NetworkID: netID, DeviceID: v.ID, DeviceOwner: "compute:" + v.AZ, MACAddress: sp.MACAddress, BindingHostID: serverHost}, want)
	if errResp != nil {
		return fmt.Errorf("server %s: port on %s: %v", v.Name, netID, errResp.Body)
	}
	sp.ID, sp.Network, sp.MACAddress, sp.FixedIPs = p.ID, netID, p.MACAddress, nil
	for _, ip := range p.FixedIPs {
		sp.FixedIPs = append(sp.FixedIPs, ip.IPAddress)
	}
	if sp.FloatingIP == "" {
		return nil
	}
	fnet := s.st.defaults.FloatingNetworkID
	if fnet == "" {
		return fmt.Errorf("server %s: no default floating network for floating_ip", v.Name)
	}
	addr := sp.FloatingIP
	if addr == "auto" {
		addr = ""
	}
	want = []FixedIP{{IPAddress: addr}}
	if addr == "" {
		want = nil
	}
	f := &FloatingIP{
		ID: s.st.newID(kFloatingIP), FloatingNetworkID: fnet, Status: "ACTIVE",
		TaggedAttributes: newTaggedAttributes(nil, s.st.projectID),
	}
	if errResp := s.associate(f, p.ID, ""); errResp != nil {
		return fmt.Errorf("server %s: floating IP: %v", v.Name, errResp.Body)
	}
	fp, errResp := s.newPort(Port{NetworkID: fnet, DeviceID: f.ID, DeviceOwner: OwnerFloatingIP, SecurityGroups: []string{}, Status: "N/A"}, want)
	if errResp != nil {
		return fmt.Errorf("server %s: floating IP: %v", v.Name, errResp.Body)
	}
	f.FloatingIPAddress = fp.FixedIPs[0].IPAddress
	sp.FloatingIP = f.FloatingIPAddress
	s.st.floatingIPs.Put(f.ID, f)
	return nil
}

// networkByRef resolves a network ID or name.
func (s *Server) networkByRef(ref string) string {
	if n, ok := s.st.networks.Get(ref); ok {
		return n.ID
	}
	for _, n := range s.st.networks.All() {
		if n.Name == ref {
			return n.ID
		}
	}
	return ""
}

// DeleteServer removes a server, its ports and their floating IP
// associations, as Nova does for ports it created, and detaches its
// volumes (deleting those attached with delete_on_termination).
func (s *Server) DeleteServer(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteServer(id)
}

func (s *Server) deleteServer(id string) {
	if v, ok := s.st.servers.Get(id); ok {
		s.stopTask(v)
	}
	s.detachServerVolumes(id)
	for _, p := range s.st.ports.All() {
		if p.DeviceID == id {
			for _, ip := range p.FixedIPs {
				s.st.goneServers[ip.IPAddress] = id
			}
			s.removePort(p)
		}
	}
	s.st.servers.Del(id)
}

// SetServerStatus sets a server's status (SHUTOFF to power it off),
// ending any task it had; false if there is no such server.
func (s *Server) SetServerStatus(id, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.st.servers.Get(id)
	if ok {
		s.stopTask(v)
		v.Status = status
	}
	return ok
}

// Servers returns every server, oldest first.
func (s *Server) Servers() []NovaServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.viewingServers()()
	var out []NovaServer
	for _, v := range s.st.servers.All() {
		out = append(out, s.serverView(v))
	}
	return out
}

// serverView is the server with its current ports and floating IPs.
func (s *Server) serverView(v *serverRec) NovaServer {
	x := s.ports
	if x == nil {
		x = s.st.indexPorts()
	}
	out := v.clone()
	out.Ports = nil
	for _, p := range x.byDevice[v.ID] {
		sp := ServerPort{ID: p.ID, Network: p.NetworkID, MACAddress: p.MACAddress, FloatingIP: x.floating[p.ID]}
		for _, ip := range p.FixedIPs {
			sp.FixedIPs = append(sp.FixedIPs, ip.IPAddress)
		}
		out.Ports = append(out.Ports, sp)
	}
	return out
}

// portIndex is the ports of each device, in creation order, and the
// floating IP of each port (the newest, if several): what serverView
// reads, made once for a request that views many servers. Viewing each of
// 5,000 servers by reading every port, and every floating IP for each of
// its ports, was a second a page of servers.
type portIndex struct {
	byDevice map[string][]*Port
	floating map[string]string
}

func (st *state) indexPorts() *portIndex {
	x := &portIndex{byDevice: map[string][]*Port{}, floating: map[string]string{}}
	for _, p := range st.ports.All() {
		x.byDevice[p.DeviceID] = append(x.byDevice[p.DeviceID], p)
	}
	for _, f := range st.floatingIPs.All() {
		if f.PortID != "" {
			x.floating[f.PortID] = f.FloatingIPAddress
		}
	}
	return x
}

// viewingServers makes serverView read one index of the ports until the
// function it returns is called (s.mu held throughout, and no port or
// floating IP changed meanwhile).
func (s *Server) viewingServers() (done func()) {
	s.ports = s.st.indexPorts()
	return func() { s.ports = nil }
}
