package tritonsim

import (
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Network is a network the account can provision on, as GetNetwork
// serves it (triton-go's network.Network); VLAN is its fabric VLAN (0 for
// a network that is not a fabric).
type Network struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Public           bool              `json:"public"`
	Fabric           bool              `json:"fabric"`
	Description      string            `json:"description"`
	Subnet           string            `json:"subnet"`
	ProvisionStartIP string            `json:"provision_start_ip"`
	ProvisionEndIP   string            `json:"provision_end_ip"`
	Gateway          string            `json:"gateway"`
	Resolvers        []string          `json:"resolvers"`
	Routes           map[string]string `json:"routes"`
	InternetNAT      bool              `json:"internet_nat"`
	VLAN             int               `json:"vlan_id,omitempty"`
}

func (n *Network) clone() Network {
	c := *n
	c.Resolvers = slices.Clone(n.Resolvers)
	c.Routes = cloneMap(n.Routes)
	return c
}

// netmask is the dotted netmask of the network's subnet.
func (n *Network) netmask() string {
	p, err := netip.ParsePrefix(n.Subnet)
	if err != nil || !p.Addr().Is4() {
		return ""
	}
	bits := uint32(0xffffffff) << (32 - p.Bits())
	return netip.AddrFrom4([4]byte{byte(bits >> 24), byte(bits >> 16), byte(bits >> 8), byte(bits)}).String()
}

// VLAN is a fabric VLAN (triton-go's network.FabricVLAN).
type VLAN struct {
	ID          int    `json:"vlan_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// NIC is a machine's network interface, as ListNICs serves it
// (triton-go's compute.NIC).
type NIC struct {
	IP      string `json:"ip"`
	MAC     string `json:"mac"`
	Primary bool   `json:"primary"`
	Netmask string `json:"netmask"`
	Gateway string `json:"gateway"`
	State   string `json:"state"`
	Network string `json:"network"`
}

// AddNetwork adds a network (a fabric one on VLAN n.VLAN, created if
// new, when n.Fabric) and returns it; an empty ID is generated, as is a
// subnet (10.<k>.0.0/16) when none is given.
func (s *Server) AddNetwork(n Network) Network {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addNetwork(n).clone()
}

func (st *state) addNetwork(n Network) *Network {
	if n.ID == "" {
		n.ID = st.uuid("network")
	}
	if n.Subnet == "" {
		k := 10 + st.networks.Len()
		n.Subnet = "10." + strconv.Itoa(k) + ".0.0/16"
		n.Gateway = "10." + strconv.Itoa(k) + ".0.1"
		n.ProvisionStartIP, n.ProvisionEndIP = "10."+strconv.Itoa(k)+".0.5", "10."+strconv.Itoa(k)+".255.250"
	}
	if n.Routes == nil {
		n.Routes = map[string]string{}
	}
	if n.Resolvers == nil {
		n.Resolvers = []string{}
	}
	if n.Fabric {
		if n.VLAN == 0 {
			n.VLAN = defaultFabricVLAN
		}
		if !slices.ContainsFunc(st.vlans, func(v VLAN) bool { return v.ID == n.VLAN }) {
			st.vlans = append(st.vlans, VLAN{ID: n.VLAN, Name: "VLAN-" + strconv.Itoa(n.VLAN)})
		}
	}
	st.networks.Put(n.ID, &n)
	return &n
}

// networkByName finds a network by ID or name.
func (st *state) network(ref string) (*Network, bool) {
	if n, ok := st.networks.Get(ref); ok {
		return n, true
	}
	for _, n := range st.networks.All() {
		if n.Name == ref {
			return n, true
		}
	}
	return nil, false
}

// publicNetwork and fabricNetwork are the first public and fabric
// networks: where machines go when a create names none.
func (st *state) defaultNetworks() []*Network {
	var out []*Network
	for _, want := range []func(*Network) bool{
		func(n *Network) bool { return n.Public }, func(n *Network) bool { return n.Fabric },
	} {
		if i := slices.IndexFunc(st.networks.All(), want); i >= 0 {
			out = append(out, st.networks.All()[i])
		}
	}
	return out
}

func (s *Server) listNetworks(*http.Request) simkit.Response {
	return ok(simkit.CloneAll(s.st.networks.All(), (*Network).clone))
}

func (s *Server) getNetwork(r *http.Request) simkit.Response {
	n, found := s.st.networks.Get(r.PathValue("id"))
	if !found {
		return notFound("network", r.PathValue("id"))
	}
	return ok(n.clone())
}

func (s *Server) listVLANs(*http.Request) simkit.Response { return ok(slices.Clone(s.st.vlans)) }

func (s *Server) vlan(r *http.Request) (VLAN, *simkit.Response) {
	id, err := strconv.Atoi(r.PathValue("vlan"))
	if i := slices.IndexFunc(s.st.vlans, func(v VLAN) bool { return v.ID == id }); err == nil && i >= 0 {
		return s.st.vlans[i], nil
	}
	resp := notFound("VLAN", r.PathValue("vlan"))
	return VLAN{}, &resp
}

func (s *Server) getVLAN(r *http.Request) simkit.Response {
	v, fail := s.vlan(r)
	if fail != nil {
		return *fail
	}
	return ok(v)
}

func (s *Server) listVLANNetworks(r *http.Request) simkit.Response {
	v, fail := s.vlan(r)
	if fail != nil {
		return *fail
	}
	out := []Network{}
	for _, n := range s.st.networks.All() {
		if n.Fabric && n.VLAN == v.ID {
			out = append(out, n.clone())
		}
	}
	return ok(out)
}

func (s *Server) listNICs(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	return ok(slices.Clone(m.NICs))
}

// getNIC serves GET .../nics/{mac}: the MAC with or without colons (as
// triton-go strips them).
func (s *Server) getNIC(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	mac := strings.ReplaceAll(strings.ToLower(r.PathValue("mac")), ":", "")
	for _, n := range m.NICs {
		if strings.ReplaceAll(n.MAC, ":", "") == mac {
			return ok(n)
		}
	}
	return notFound("NIC", r.PathValue("mac"))
}
