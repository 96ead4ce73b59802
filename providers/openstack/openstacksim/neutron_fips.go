package openstacksim

import (
	"net/http"
	"slices"
)

// fipView is a floating IP as the API shows it: unset associations are
// null, and the status is ACTIVE once associated (DOWN in the create
// answer, as Neutron reports it before the L3 agent catches up).
func fipView(f *FloatingIP) map[string]any {
	m := toMap(f)
	for _, k := range []string{"port_id", "fixed_ip_address", "router_id"} {
		if m[k] == "" {
			m[k] = nil
		}
	}
	return m
}

// settleFIP is what a read sees: ACTIVE when associated, DOWN otherwise.
func settleFIP(f *FloatingIP) {
	f.Status = "DOWN"
	if f.PortID != "" {
		f.Status = "ACTIVE"
	}
}

type fipRequest struct {
	FloatingNetworkID string   `json:"floating_network_id"`
	FloatingIPAddress string   `json:"floating_ip_address"`
	SubnetID          string   `json:"subnet_id"`
	PortID            *string  `json:"port_id"`
	FixedIPAddress    string   `json:"fixed_ip_address"`
	Description       string   `json:"description"`
	Tags              []string `json:"tags"`
}

func (s *Server) createFloatingIP(r *http.Request) response {
	obj, err := decodeEnvelope(r, "floatingip")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	var req fipRequest
	if err := decodeAttrs(obj, &req); err != nil {
		return neutronBadRequest("%v", err)
	}
	net, ok := s.st.networks.Get(req.FloatingNetworkID)
	if req.FloatingNetworkID == "" {
		return neutronBadRequest("Failed to parse request. Required attribute 'floating_network_id' not specified")
	}
	if !ok {
		return neutronNotFound("Network", req.FloatingNetworkID)
	}
	if !net.External {
		return neutronBadRequest("Bad floatingip request: Network %s is not a valid external network.", net.ID)
	}
	want := FixedIP{SubnetID: req.SubnetID, IPAddress: req.FloatingIPAddress}
	if want == (FixedIP{}) {
		if sr := s.st.firstSubnet(net.ID, 4); sr != nil {
			want.SubnetID = sr.ID
		}
	}
	f := &FloatingIP{
		ID: s.st.newID(kFloatingIP), FloatingNetworkID: net.ID, Description: req.Description,
		Status: "DOWN", TaggedAttributes: newTaggedAttributes(req.Tags, s.st.projectID),
	}
	if req.PortID != nil && *req.PortID != "" {
		if errResp := s.associate(f, *req.PortID, req.FixedIPAddress); errResp != nil {
			return *errResp
		}
	}
	p, errResp := s.newPort(Port{NetworkID: net.ID, DeviceID: f.ID, DeviceOwner: OwnerFloatingIP, SecurityGroups: []string{}, Status: "N/A"}, []FixedIP{want})
	if errResp != nil {
		return *errResp
	}
	f.FloatingIPAddress = p.FixedIPs[0].IPAddress
	s.st.floatingIPs.Put(f.ID, f)
	return created(map[string]any{"floatingip": fipView(f)})
}

// associate points f at a port: it needs a fixed IP on a subnet that a
// router connects to f's external network, and no other floating IP on
// that fixed IP.
func (s *Server) associate(f *FloatingIP, portID, fixedIP string) *response {
	p, ok := s.st.ports.Get(portID)
	if !ok {
		r := neutronNotFound("Port", portID)
		return &r
	}
	var ip *FixedIP
	for i := range p.FixedIPs {
		if fixedIP == "" && s.isIPv4(p.FixedIPs[i].IPAddress) || p.FixedIPs[i].IPAddress == fixedIP {
			ip = &p.FixedIPs[i]
			break
		}
	}
	if ip == nil {
		r := neutronBadRequest("Bad floatingip request: Port %s does not have fixed ip %s.", portID, fixedIP)
		if fixedIP == "" {
			r = neutronBadRequest("Bad floatingip request: No IPv4 address found on port %s.", portID)
		}
		return &r
	}
	for _, other := range s.st.floatingIPs.All() {
		if other.ID != f.ID && other.PortID == portID && other.FixedIPAddress == ip.IPAddress {
			r := neutronError(http.StatusConflict, "FloatingIPPortAlreadyAssociated",
				"Cannot associate floating IP %s (%s) with port %s using fixed IP %s, as that fixed IP already has a floating IP on external network %s.",
				f.FloatingIPAddress, f.ID, portID, ip.IPAddress, other.FloatingNetworkID)
			return &r
		}
	}
	routerID := s.routerBetween(ip.SubnetID, f.FloatingNetworkID)
	if routerID == "" {
		r := neutronError(http.StatusNotFound, "ExternalGatewayForFloatingIPNotFound",
			"External network %s is not reachable from subnet %s.  Therefore, cannot associate Port %s with a Floating IP.",
			f.FloatingNetworkID, ip.SubnetID, portID)
		return &r
	}
	f.PortID, f.FixedIPAddress, f.RouterID = portID, ip.IPAddress, routerID
	return nil
}

func (s *Server) isIPv4(ip string) bool {
	sr := s.st.subnetContaining("", ip)
	return sr != nil && sr.IPVersion == 4
}

// routerBetween is a router with its gateway on externalNetworkID and an
// interface on subnetID, "" if none.
func (s *Server) routerBetween(subnetID, externalNetworkID string) string {
	for _, rt := range s.st.routers.All() {
		if rt.ExternalGatewayInfo == nil || rt.ExternalGatewayInfo.NetworkID != externalNetworkID {
			continue
		}
		for _, p := range s.st.ports.All() {
			if p.DeviceID == rt.ID && p.DeviceOwner == OwnerRouterInterface &&
				slices.ContainsFunc(p.FixedIPs, func(ip FixedIP) bool { return ip.SubnetID == subnetID }) {
				return rt.ID
			}
		}
	}
	return ""
}

func (s *Server) updateFloatingIP(r *http.Request) response {
	f, ok := s.st.floatingIPs.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Floating IP", r.PathValue("id"))
	}
	if errResp := ifMatch(r, f.RevisionNumber); errResp != nil {
		return *errResp
	}
	obj, err := decodeEnvelope(r, "floatingip")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	var req fipRequest
	if err := decodeAttrs(obj, &req); err != nil {
		return neutronBadRequest("%v", err)
	}
	for k := range obj {
		if !slices.Contains([]string{"port_id", "fixed_ip_address", "description", "tags"}, k) {
			return neutronBadRequest("Cannot update read-only attribute %s", k)
		}
	}
	next := f.clone()
	if _, set := obj["port_id"]; set {
		next.PortID, next.FixedIPAddress, next.RouterID = "", "", ""
		if req.PortID != nil && *req.PortID != "" {
			if errResp := s.associate(&next, *req.PortID, req.FixedIPAddress); errResp != nil {
				return *errResp
			}
		}
	}
	if _, set := obj["description"]; set {
		next.Description = req.Description
	}
	if _, set := obj["tags"]; set {
		next.Tags = nonNil(req.Tags)
	}
	next.revise()
	*f = next
	return jsonOK(map[string]any{"floatingip": fipView(f)})
}

func (s *Server) deleteFloatingIP(r *http.Request) response {
	f, ok := s.st.floatingIPs.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Floating IP", r.PathValue("id"))
	}
	s.removeFloatingIP(f)
	return noContent()
}

// removeFloatingIP deletes f and its address's port. The caller holds
// s.mu.
func (s *Server) removeFloatingIP(f *FloatingIP) {
	for _, p := range s.st.ports.All() {
		if p.DeviceID == f.ID && p.DeviceOwner == OwnerFloatingIP {
			s.removePort(p)
		}
	}
	s.st.floatingIPs.Del(f.ID)
}
