package openstacksim

import (
	"net/netip"
	"slices"
)

// Network is a Neutron network, as the API shows it.
type Network struct {
	ID                  string   `json:"id"`
	Name                string   `json:"name"`
	Description         string   `json:"description"`
	Status              string   `json:"status"`
	AdminStateUp        bool     `json:"admin_state_up"`
	Shared              bool     `json:"shared"`
	External            bool     `json:"router:external"`
	Subnets             []string `json:"subnets"`
	MTU                 int      `json:"mtu"`
	PortSecurityEnabled bool     `json:"port_security_enabled"`
	AvailabilityZones   []string `json:"availability_zones"`
	// AvailabilityZoneHints are the zones asked for at creation.
	AvailabilityZoneHints []string `json:"availability_zone_hints"`
	TaggedAttributes
}

func (n Network) clone() Network {
	n.Subnets, n.Tags, n.AvailabilityZones = slices.Clone(n.Subnets), slices.Clone(n.Tags), slices.Clone(n.AvailabilityZones)
	n.AvailabilityZoneHints = slices.Clone(n.AvailabilityZoneHints)
	return n
}

// AllocationPool is a range of a subnet's addresses Neutron hands out.
type AllocationPool struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Subnet is a Neutron subnet.
type Subnet struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Description     string           `json:"description"`
	NetworkID       string           `json:"network_id"`
	CIDR            string           `json:"cidr"`
	IPVersion       int              `json:"ip_version"`
	GatewayIP       string           `json:"gateway_ip"`
	EnableDHCP      bool             `json:"enable_dhcp"`
	AllocationPools []AllocationPool `json:"allocation_pools"`
	DNSNameservers  []string         `json:"dns_nameservers"`
	HostRoutes      []Route          `json:"host_routes"`
	IPv6AddressMode string           `json:"ipv6_address_mode,omitempty"`
	IPv6RAMode      string           `json:"ipv6_ra_mode,omitempty"`
	TaggedAttributes
}

func (n Subnet) clone() Subnet {
	n.AllocationPools, n.DNSNameservers = slices.Clone(n.AllocationPools), slices.Clone(n.DNSNameservers)
	n.HostRoutes, n.Tags = slices.Clone(n.HostRoutes), slices.Clone(n.Tags)
	return n
}

// subnetRec is a subnet and its address allocation.
type subnetRec struct {
	Subnet
	prefix netip.Prefix
	used   map[netip.Addr]bool
}

// FixedIP is an address of a port on a subnet.
type FixedIP struct {
	SubnetID  string `json:"subnet_id"`
	IPAddress string `json:"ip_address"`
}

// AddressPair is an allowed address pair of a port.
type AddressPair struct {
	IPAddress  string `json:"ip_address"`
	MACAddress string `json:"mac_address,omitempty"`
}

// Port is a Neutron port.
type Port struct {
	ID                  string        `json:"id"`
	Name                string        `json:"name"`
	Description         string        `json:"description"`
	NetworkID           string        `json:"network_id"`
	MACAddress          string        `json:"mac_address"`
	FixedIPs            []FixedIP     `json:"fixed_ips"`
	DeviceID            string        `json:"device_id"`
	DeviceOwner         string        `json:"device_owner"`
	Status              string        `json:"status"`
	AdminStateUp        bool          `json:"admin_state_up"`
	SecurityGroups      []string      `json:"security_groups"`
	AllowedAddressPairs []AddressPair `json:"allowed_address_pairs"`
	PortSecurityEnabled bool          `json:"port_security_enabled"`
	BindingVNICType     string        `json:"binding:vnic_type"`
	BindingHostID       string        `json:"binding:host_id"`
	TaggedAttributes
}

func (p Port) clone() Port {
	p.FixedIPs, p.SecurityGroups = slices.Clone(p.FixedIPs), slices.Clone(p.SecurityGroups)
	p.AllowedAddressPairs, p.Tags = slices.Clone(p.AllowedAddressPairs), slices.Clone(p.Tags)
	return p
}

// Device owners Neutron and the services write on ports.
const (
	OwnerCompute         = "compute:nova"
	OwnerRouterInterface = "network:router_interface"
	OwnerRouterGateway   = "network:router_gateway"
	OwnerFloatingIP      = "network:floatingip"
	OwnerDHCP            = "network:dhcp"
	OwnerOctavia         = "Octavia"
)

// Route is a router's extra route (or a subnet's host route).
type Route struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// GatewayInfo is a router's external gateway.
type GatewayInfo struct {
	NetworkID        string    `json:"network_id"`
	EnableSNAT       bool      `json:"enable_snat"`
	ExternalFixedIPs []FixedIP `json:"external_fixed_ips"`
}

// Router is a Neutron router.
type Router struct {
	ID                  string       `json:"id"`
	Name                string       `json:"name"`
	Description         string       `json:"description"`
	Status              string       `json:"status"`
	AdminStateUp        bool         `json:"admin_state_up"`
	Distributed         bool         `json:"distributed"`
	HA                  bool         `json:"ha"`
	ExternalGatewayInfo *GatewayInfo `json:"external_gateway_info"`
	Routes              []Route      `json:"routes"`
	AvailabilityZones   []string     `json:"availability_zones"`
	// AvailabilityZoneHints are the zones asked for at creation.
	AvailabilityZoneHints []string `json:"availability_zone_hints"`
	TaggedAttributes
}

func (r Router) clone() Router {
	if r.ExternalGatewayInfo != nil {
		g := *r.ExternalGatewayInfo
		g.ExternalFixedIPs = slices.Clone(g.ExternalFixedIPs)
		r.ExternalGatewayInfo = &g
	}
	r.Routes, r.Tags, r.AvailabilityZones = slices.Clone(r.Routes), slices.Clone(r.Tags), slices.Clone(r.AvailabilityZones)
	r.AvailabilityZoneHints = slices.Clone(r.AvailabilityZoneHints)
	return r
}

// FloatingIP is a Neutron floating IP. PortID, FixedIPAddress and
// RouterID are "" (null in the API) while it is not associated.
type FloatingIP struct {
	ID                string `json:"id"`
	Description       string `json:"description"`
	FloatingNetworkID string `json:"floating_network_id"`
	FloatingIPAddress string `json:"floating_ip_address"`
	PortID            string `json:"port_id"`
	FixedIPAddress    string `json:"fixed_ip_address"`
	RouterID          string `json:"router_id"`
	Status            string `json:"status"`
	TaggedAttributes
}

func (f FloatingIP) clone() FloatingIP {
	f.Tags = slices.Clone(f.Tags)
	return f
}

// SecurityGroupRule is a rule of a security group. The pointer fields are
// null in the API when unset.
type SecurityGroupRule struct {
	ID              string  `json:"id"`
	SecurityGroupID string  `json:"security_group_id"`
	Description     string  `json:"description"`
	Direction       string  `json:"direction"`
	EtherType       string  `json:"ethertype"`
	Protocol        *string `json:"protocol"`
	PortRangeMin    *int    `json:"port_range_min"`
	PortRangeMax    *int    `json:"port_range_max"`
	RemoteIPPrefix  *string `json:"remote_ip_prefix"`
	RemoteGroupID   *string `json:"remote_group_id"`
	StandardAttributes
}

// SecurityGroup is a Neutron security group with its rules.
type SecurityGroup struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Stateful    bool                `json:"stateful"`
	Rules       []SecurityGroupRule `json:"security_group_rules"`
	TaggedAttributes
}

func (g SecurityGroup) clone() SecurityGroup {
	g.Rules, g.Tags = slices.Clone(g.Rules), slices.Clone(g.Tags)
	return g
}
