package openstacksim

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
)

// Defaults are the IDs of what New creates unless Options.NoDefaults: a
// tenant network "private" with subnet 10.0.0.0/16 (room for the
// bench's 1,000 servers and 200 VIPs), an external network
// "public" (router:external) with subnet 172.24.0.0/16 for floating IPs
// (allocated from 172.24.4.2 up, as DevStack's 172.24.4.0/24 would, with
// room for the bench's 1,000 load balancers at 5,000 nodes),
// a router "router1" with its gateway on "public" and an interface on the
// private subnet, and the project's "default" security group.
type Defaults struct {
	NetworkID         string `json:"network_id,omitempty"`
	SubnetID          string `json:"subnet_id,omitempty"`
	FloatingNetworkID string `json:"floating_network_id,omitempty"`
	FloatingSubnetID  string `json:"floating_subnet_id,omitempty"`
	RouterID          string `json:"router_id,omitempty"`
	SecurityGroupID   string `json:"security_group_id,omitempty"`
}

// Defaults returns the IDs of the default resources; all "" with
// Options.NoDefaults.
func (s *Server) Defaults() Defaults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.defaults
}

func (s *Server) addDefaults() {
	net := s.AddNetwork(Network{Name: "private"})
	sub := s.AddSubnet(Subnet{Name: "private-subnet", NetworkID: net.ID, CIDR: "10.0.0.0/16"})
	fnet := s.AddNetwork(Network{Name: "public", External: true})
	fsub := s.AddSubnet(Subnet{
		Name: "public-subnet", NetworkID: fnet.ID, CIDR: "172.24.0.0/16", GatewayIP: "172.24.4.1",
		AllocationPools: []AllocationPool{{Start: "172.24.4.2", End: "172.24.255.254"}},
	})
	router := s.AddRouter(Router{Name: "router1"}, fnet.ID, sub.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	sg := s.st.defaultSecurityGroup(s.st.projectID)
	s.st.defaults = Defaults{
		NetworkID: net.ID, SubnetID: sub.ID, FloatingNetworkID: fnet.ID, FloatingSubnetID: fsub.ID,
		RouterID: router.ID, SecurityGroupID: sg.ID,
	}
}

// AddNetwork adds a network. Unset fields get defaults: a generated ID,
// status ACTIVE, admin state up, MTU 1450 (1500 when External), port
// security on, the default project.
func (s *Server) AddNetwork(n Network) Network {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n.ID == "" {
		n.ID = s.st.newID(kNetwork)
	}
	if n.Status == "" {
		n.Status = "ACTIVE"
	}
	n.AdminStateUp = true
	if n.MTU == 0 {
		n.MTU = 1450
		if n.External {
			n.MTU = 1500
		}
	}
	n.PortSecurityEnabled = true
	n.Subnets = []string{}
	if n.AvailabilityZones == nil {
		n.AvailabilityZones = []string{"nova"}
	}
	n.AvailabilityZoneHints = nonNil(n.AvailabilityZoneHints)
	n.TaggedAttributes = newTaggedAttributes(n.Tags, cmpOr(n.ProjectID, s.st.projectID))
	s.st.networks.Put(n.ID, &n)
	return n.clone()
}

// AddSubnet adds a subnet to an existing network. CIDR is required; unset
// fields get defaults: the CIDR's first host as gateway, an allocation
// pool of the hosts after it, IP version from the CIDR, DHCP on. It
// panics on a bad CIDR or an unknown network: it is for test setup.
func (s *Server) AddSubnet(sub Subnet) Subnet {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix, err := netip.ParsePrefix(sub.CIDR)
	if err != nil {
		panic(fmt.Sprintf("openstacksim.AddSubnet: %v", err))
	}
	prefix = prefix.Masked()
	net, ok := s.st.networks.Get(sub.NetworkID)
	if !ok {
		panic(fmt.Sprintf("openstacksim.AddSubnet: no network %q", sub.NetworkID))
	}
	if sub.ID == "" {
		sub.ID = s.st.newID(kSubnet)
	}
	sub.CIDR = prefix.String()
	sub.IPVersion = 4
	if prefix.Addr().Is6() {
		sub.IPVersion = 6
	}
	first := prefix.Addr().Next()
	if sub.GatewayIP == "" {
		sub.GatewayIP = first.String()
	}
	if len(sub.AllocationPools) == 0 {
		start := first
		if sub.GatewayIP == first.String() {
			start = first.Next()
		}
		sub.AllocationPools = []AllocationPool{{Start: start.String(), End: lastHost(prefix).String()}}
	}
	sub.EnableDHCP = true
	sub.DNSNameservers, sub.HostRoutes = nonNil(sub.DNSNameservers), nonNil(sub.HostRoutes)
	sub.TaggedAttributes = newTaggedAttributes(sub.Tags, cmpOr(sub.ProjectID, net.ProjectID))
	rec := &subnetRec{Subnet: sub, prefix: prefix, used: map[netip.Addr]bool{}}
	if gw, err := netip.ParseAddr(sub.GatewayIP); err == nil {
		rec.used[gw] = true
	}
	s.st.subnets.Put(sub.ID, rec)
	net.Subnets = append(net.Subnets, sub.ID)
	return sub.clone()
}

// AddFloatingNetwork adds an external (router:external) network called
// name with one subnet of cidr, for floating IPs and router gateways.
func (s *Server) AddFloatingNetwork(name, cidr string) (Network, Subnet) {
	n := s.AddNetwork(Network{Name: name, External: true})
	sub := s.AddSubnet(Subnet{Name: name + "-subnet", NetworkID: n.ID, CIDR: cidr})
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.st.networks.Get(n.ID); ok {
		n = rec.clone()
	}
	return n, sub
}

// lastHost is the last usable address of p (the broadcast address is
// skipped for IPv4).
func lastHost(p netip.Prefix) netip.Addr {
	a := p.Addr().AsSlice()
	bits := p.Bits()
	for i := range a {
		for b := 0; b < 8; b++ {
			if i*8+b >= bits {
				a[i] |= 0x80 >> b
			}
		}
	}
	last, _ := netip.AddrFromSlice(a)
	if last.Is4() {
		last = last.Prev()
	}
	return last
}

// allocate takes ip ("" for the next free one in the allocation pools) on
// the subnet.
func (sr *subnetRec) allocate(ip string) (netip.Addr, error) {
	if ip != "" {
		a, err := netip.ParseAddr(ip)
		if err != nil || !sr.prefix.Contains(a) {
			return netip.Addr{}, fmt.Errorf("IP address %s is not a valid IP for the specified subnet.", ip) //nolint:staticcheck // the service's own message, verbatim
		}
		if sr.used[a] && ip != sr.GatewayIP {
			return netip.Addr{}, errIPInUse{ip: ip}
		}
		sr.used[a] = true
		return a, nil
	}
	for _, pool := range sr.AllocationPools {
		start, err1 := netip.ParseAddr(pool.Start)
		end, err2 := netip.ParseAddr(pool.End)
		if err1 != nil || err2 != nil {
			continue
		}
		for a := start; a.IsValid() && a.Compare(end) <= 0; a = a.Next() {
			if !sr.used[a] {
				sr.used[a] = true
				return a, nil
			}
		}
	}
	return netip.Addr{}, errNoMoreIPs{}
}

func (sr *subnetRec) release(ip string) {
	if a, err := netip.ParseAddr(ip); err == nil && ip != sr.GatewayIP {
		delete(sr.used, a)
	}
}

type errIPInUse struct{ ip string }

func (e errIPInUse) Error() string { return "IP address " + e.ip + " already allocated in subnet" }

type errNoMoreIPs struct{}

func (errNoMoreIPs) Error() string { return "No more IP addresses available on network." }

// firstSubnet is the network's first subnet of IP version v (4 or 6), nil
// if it has none.
func (st *state) firstSubnet(networkID string, v int) *subnetRec {
	n, ok := st.networks.Get(networkID)
	if !ok {
		return nil
	}
	for _, id := range n.Subnets {
		if sr, ok := st.subnets.Get(id); ok && sr.IPVersion == v {
			return sr
		}
	}
	return nil
}

// subnetContaining is the subnet of networkID ("" for any) whose CIDR
// holds ip.
func (st *state) subnetContaining(networkID, ip string) *subnetRec {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return nil
	}
	for _, sr := range st.subnets.All() {
		if (networkID == "" || sr.NetworkID == networkID) && sr.prefix.Contains(a) {
			return sr
		}
	}
	return nil
}

func subnetView(sr *subnetRec) map[string]any {
	m := toMap(sr.Subnet)
	for _, k := range []string{"gateway_ip", "ipv6_address_mode", "ipv6_ra_mode"} {
		if m[k] == nil || m[k] == "" {
			m[k] = nil
		}
	}
	m["subnetpool_id"] = nil
	return m
}

// neutronList filters (strictly, as Neutron's filter validation does),
// pages and projects items.
func (s *Server) neutronList(r *http.Request, plural, kind string, items []map[string]any, special ...string) response {
	q := r.URL.Query()
	items, err := changedSince(q, items)
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	items, err = filter(q, items, true, append(special, "changed_since")...)
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	p, errResp := s.paginate(r, items, neutronPages, kind)
	if errResp != nil {
		return *errResp
	}
	p.items = project(q, p.items)
	return jsonOK(listBody(plural, p))
}

func ok200(key string, v any) response { return jsonOK(map[string]any{key: v}) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}
