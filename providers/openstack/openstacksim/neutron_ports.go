package openstacksim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// newPort creates a port on networkID with the requested fixed IPs (none:
// one address on the network's first IPv4 subnet, or IPv6 if it has no
// IPv4 one). The caller holds s.mu.
func (s *Server) newPort(p Port, want []FixedIP) (*Port, *response) {
	net, ok := s.st.networks.Get(p.NetworkID)
	if !ok {
		r := neutronNotFound("Network", p.NetworkID)
		return nil, &r
	}
	if len(want) == 0 {
		sr := s.st.firstSubnet(net.ID, 4)
		if sr == nil {
			sr = s.st.firstSubnet(net.ID, 6)
		}
		if sr != nil {
			want = []FixedIP{{SubnetID: sr.ID}}
		}
	}
	var got []FixedIP
	undo := func() {
		for _, ip := range got {
			if sr, ok := s.st.subnets.Get(ip.SubnetID); ok {
				sr.release(ip.IPAddress)
			}
		}
	}
	for _, w := range want {
		sr, errResp := s.fixedIPSubnet(net.ID, w)
		if errResp != nil {
			undo()
			return nil, errResp
		}
		a, err := sr.allocate(w.IPAddress)
		if err != nil {
			undo()
			r := allocationError(err, net.ID)
			return nil, &r
		}
		got = append(got, FixedIP{SubnetID: sr.ID, IPAddress: a.String()})
	}
	if p.ID == "" {
		p.ID = s.st.newID(kPort)
	}
	n := s.st.seq[kPort]
	if p.MACAddress == "" {
		p.MACAddress = fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", n>>16&0xff, n>>8&0xff, n&0xff)
	}
	p.FixedIPs = got
	if p.Status == "" {
		p.Status = "DOWN"
		if p.DeviceID != "" {
			p.Status = "ACTIVE"
		}
	}
	p.AdminStateUp, p.PortSecurityEnabled = true, net.PortSecurityEnabled
	if p.SecurityGroups == nil {
		p.SecurityGroups = []string{}
		if p.DeviceOwner == "" || strings.HasPrefix(p.DeviceOwner, "compute:") {
			p.SecurityGroups = []string{s.st.defaultSecurityGroup(s.st.projectID).ID}
		}
	}
	p.AllowedAddressPairs = nonNil(p.AllowedAddressPairs)
	p.BindingVNICType = "normal"
	p.TaggedAttributes = newTaggedAttributes(p.Tags, cmpOr(p.ProjectID, s.st.projectID))
	s.st.ports.Put(p.ID, &p)
	return &p, nil
}

// fixedIPSubnet is the subnet a requested fixed IP goes on.
func (s *Server) fixedIPSubnet(networkID string, w FixedIP) (*subnetRec, *response) {
	if w.SubnetID != "" {
		sr, ok := s.st.subnets.Get(w.SubnetID)
		if !ok || sr.NetworkID != networkID {
			r := neutronBadRequest("Invalid input for operation: Failed to create port on network %s, because fixed_ips included invalid subnet %s.", networkID, w.SubnetID)
			return nil, &r
		}
		return sr, nil
	}
	if sr := s.st.subnetContaining(networkID, w.IPAddress); sr != nil {
		return sr, nil
	}
	r := neutronBadRequest("Invalid input for operation: IP address %s is not a valid IP for any subnet on network %s.", w.IPAddress, networkID)
	return nil, &r
}

func allocationError(err error, networkID string) response {
	var inUse errIPInUse
	switch {
	case errors.As(err, &inUse):
		return neutronError(http.StatusConflict, "IpAddressAlreadyAllocated", "IP address %s already allocated in subnet", inUse.ip)
	case errors.Is(err, errNoMoreIPs{}):
		return neutronError(http.StatusConflict, "IpAddressGenerationFailure", "No more IP addresses available on network %s.", networkID)
	}
	return neutronBadRequest("Invalid input for operation: %v", err)
}

// removePort deletes a port, releasing its addresses and disassociating
// its floating IPs. The caller holds s.mu.
func (s *Server) removePort(p *Port) {
	for _, ip := range p.FixedIPs {
		if sr, ok := s.st.subnets.Get(ip.SubnetID); ok {
			sr.release(ip.IPAddress)
		}
	}
	for _, f := range s.st.floatingIPs.All() {
		if f.PortID == p.ID {
			f.PortID, f.FixedIPAddress, f.RouterID, f.Status = "", "", "", "DOWN"
		}
	}
	s.st.ports.Del(p.ID)
}

func (s *Server) listPorts(r *http.Request) response {
	matches, err := fixedIPFilter(r.URL.Query()["fixed_ips"])
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	items := []map[string]any{}
	for _, p := range s.st.ports.All() {
		if matches(p) {
			items = append(items, portJSON(p))
		}
	}
	return s.neutronList(r, "ports", "Port", items, "fixed_ips")
}

// fixedIPFilter parses fixed_ips=ip_address=…, subnet_id=… and
// ip_address_substr=… (all must match).
func fixedIPFilter(values []string) (func(*Port) bool, error) {
	type cond struct{ key, val string }
	var conds []cond
	for _, v := range values {
		key, val, ok := strings.Cut(v, "=")
		if !ok || !slices.Contains([]string{"ip_address", "subnet_id", "ip_address_substr"}, key) {
			return nil, fmt.Errorf("Invalid input for fixed_ips. Reason: %q is not a valid filter.", v) //nolint:staticcheck // the service's own message, verbatim
		}
		conds = append(conds, cond{key, val})
	}
	return func(p *Port) bool {
		for _, c := range conds {
			if !slices.ContainsFunc(p.FixedIPs, func(ip FixedIP) bool {
				switch c.key {
				case "ip_address":
					return ip.IPAddress == c.val
				case "subnet_id":
					return ip.SubnetID == c.val
				default:
					return strings.Contains(ip.IPAddress, c.val)
				}
			}) {
				return false
			}
		}
		return true
	}, nil
}

// portAdminOnly are port attributes Neutron's default policy shows and
// lets set only to an admin.
var portAdminOnly = []string{"binding:host_id"}

// portJSON is a port as a project member sees it: without the admin-only
// binding attributes.
func portJSON(p *Port) map[string]any {
	m := toMap(p)
	for _, k := range portAdminOnly {
		delete(m, k)
	}
	return m
}

// adminOnlyPortAttr is the 403 Neutron answers a member who sets an
// admin-only port attribute in action ("create_port", "update_port").
func adminOnlyPortAttr(action string, obj map[string]json.RawMessage) *response {
	for _, k := range portAdminOnly {
		if _, ok := obj[k]; ok {
			resp := neutronError(http.StatusForbidden, "PolicyNotAuthorized", "(rule:%s and rule:%s:%s) is disallowed by policy", action, action, k)
			return &resp
		}
	}
	return nil
}

// portWritable are the attributes a port create or update may set.
var portWritable = []string{
	"name", "description", "admin_state_up", "device_id", "device_owner", "security_groups",
	"allowed_address_pairs", "port_security_enabled", "tags", "binding:host_id", "binding:vnic_type",
}

func (s *Server) createPort(r *http.Request) response {
	obj, err := decodeEnvelope(r, "port")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	if errResp := adminOnlyPortAttr("create_port", obj); errResp != nil {
		return *errResp
	}
	var req struct {
		Port
		FixedIPs []FixedIP `json:"fixed_ips"`
	}
	if err := decodeAttrs(obj, &req); err != nil {
		return neutronBadRequest("%v", err)
	}
	if req.NetworkID == "" {
		return neutronBadRequest("Failed to parse request. Required attribute 'network_id' not specified")
	}
	if errResp := s.checkPortAttrs(&req.Port); errResp != nil {
		return *errResp
	}
	p, errResp := s.newPort(Port{
		NetworkID: req.NetworkID, Name: req.Name, Description: req.Description, DeviceID: req.DeviceID,
		DeviceOwner: req.DeviceOwner, SecurityGroups: req.SecurityGroups, AllowedAddressPairs: req.AllowedAddressPairs,
		MACAddress: req.MACAddress, TaggedAttributes: TaggedAttributes{Tags: req.Tags},
	}, req.FixedIPs)
	if errResp != nil {
		return *errResp
	}
	return created(map[string]any{"port": portJSON(p)})
}

func (s *Server) updatePort(r *http.Request) response {
	p, ok := s.st.ports.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Port", r.PathValue("id"))
	}
	if errResp := ifMatch(r, p.RevisionNumber); errResp != nil {
		return *errResp
	}
	obj, err := decodeEnvelope(r, "port")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	if errResp := adminOnlyPortAttr("update_port", obj); errResp != nil {
		return *errResp
	}
	next, err := patch(*p, obj, portWritable...)
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	if errResp := s.checkPortAttrs(&next); errResp != nil {
		return *errResp
	}
	if _, set := obj["security_groups"]; set && len(next.SecurityGroups) > 0 && (!next.PortSecurityEnabled || len(next.FixedIPs) == 0) {
		return neutronError(http.StatusBadRequest, "PortSecurityAndIPRequiredForSecurityGroups",
			"Port security must be enabled and port must have an IP address in order to use security groups.")
	}
	next.SecurityGroups, next.AllowedAddressPairs = nonNil(next.SecurityGroups), nonNil(next.AllowedAddressPairs)
	next.Tags = nonNil(next.Tags)
	next.revise()
	*p = next
	return ok200("port", portJSON(p))
}

// checkPortAttrs validates security groups and allowed address pairs, as
// Neutron does, filling in each pair's MAC address.
func (s *Server) checkPortAttrs(p *Port) *response {
	for _, id := range p.SecurityGroups {
		if _, ok := s.st.securityGroups.Get(id); !ok {
			r := neutronNotFound("Security group", id)
			return &r
		}
	}
	if len(p.AllowedAddressPairs) > 0 && p.ID != "" && !p.PortSecurityEnabled {
		r := neutronError(http.StatusConflict, "AddressPairAndPortSecurityRequired",
			"Port Security must be enabled in order to have allowed address pairs on a port.")
		return &r
	}
	seen := map[AddressPair]bool{}
	for i, pair := range p.AllowedAddressPairs {
		if _, err := netip.ParsePrefix(pair.IPAddress); err != nil {
			if _, err := netip.ParseAddr(pair.IPAddress); err != nil {
				r := neutronBadRequest("Invalid input for operation: '%s' is not a valid IP address.", pair.IPAddress)
				return &r
			}
		}
		if pair.MACAddress == "" {
			p.AllowedAddressPairs[i].MACAddress = p.MACAddress
		}
		if seen[p.AllowedAddressPairs[i]] {
			r := neutronBadRequest("Request contains duplicate address pair: mac_address %s ip_address %s.", p.AllowedAddressPairs[i].MACAddress, pair.IPAddress)
			return &r
		}
		seen[p.AllowedAddressPairs[i]] = true
	}
	return nil
}

func (s *Server) deletePort(r *http.Request) response {
	p, ok := s.st.ports.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Port", r.PathValue("id"))
	}
	if p.DeviceOwner == OwnerRouterInterface || p.DeviceOwner == OwnerRouterGateway {
		return neutronError(http.StatusConflict, "ServicePortInUse",
			"Port %s cannot be deleted directly via the port API: has device owner %s.", p.ID, p.DeviceOwner)
	}
	s.removePort(p)
	return noContent()
}
