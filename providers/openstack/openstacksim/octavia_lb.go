package openstacksim

import (
	"net/http"
	"net/netip"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// listLoadBalancers counts a read of every load balancer on the page.
func (s *Server) listLoadBalancers(r *http.Request) response {
	q := r.URL.Query()
	items := []map[string]any{}
	for _, lb := range s.st.lbs.All() {
		items = append(items, s.lbJSON(lb))
	}
	kept, _ := filter(q, items, false)
	p, errResp := s.octaviaPage(r, items, kept)
	if errResp != nil {
		return *errResp
	}
	shown := []map[string]any{}
	for _, m := range p.items {
		lb, ok := s.st.lbs.Get(m["id"].(string))
		if ok && s.read(lb) {
			shown = append(shown, s.lbJSON(lb))
		}
	}
	p.items = project(q, shown)
	return jsonOK(octaviaListBody("loadbalancers", p))
}

func (s *Server) getLoadBalancer(r *http.Request) response {
	lb, ok := s.st.lbs.Get(r.PathValue("id"))
	if !ok || !s.read(lb) {
		return octaviaNotFound("Load Balancer", r.PathValue("id"))
	}
	return jsonOK(map[string]any{"loadbalancer": s.lbJSON(lb)})
}

// createLoadBalancer creates a load balancer, or a whole tree ("fully
// populated": listeners with default pools, members and monitors) in one
// call. It answers 201 PENDING_CREATE with the VIP already allocated.
func (s *Server) createLoadBalancer(r *http.Request) response {
	var body struct {
		LB *lbCreate `json:"loadbalancer"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.LB == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute loadbalancer. Value: 'None'. Mandatory field missing.")
	}
	m, _, errResp := s.createLB(body.LB)
	if errResp != nil {
		return *errResp
	}
	return created(map[string]any{"loadbalancer": m})
}

// createLB validates and creates a load balancer tree, PENDING_CREATE. It
// returns the create answer's body.
func (s *Server) createLB(req *lbCreate) (map[string]any, *lbRec, *response) {
	provider, errResp := providerName(req.Provider)
	if errResp != nil {
		return nil, nil, errResp
	}
	vip, errResp := s.resolveVIP(req)
	if errResp != nil {
		return nil, nil, errResp
	}
	if errResp := s.checkLBChildren(req, provider, vip.addr); errResp != nil {
		return nil, nil, errResp
	}
	lb := &lbRec{LoadBalancer: LoadBalancer{
		ID: s.st.newID(kLoadBalancer), Name: req.Name, Description: req.Description, ProjectID: s.st.projectID,
		AdminStateUp: boolOr(req.AdminStateUp, true), Provider: provider, FlavorID: req.FlavorID,
		AvailabilityZone: req.AvailabilityZone, Tags: nonNil(req.Tags), CreatedAt: octaviaCreatedTS,
		OperatingStatus: OperatingOffline,
	}}
	port, errResp := s.vipPort(lb, vip)
	if errResp != nil {
		return nil, nil, errResp
	}
	lb.VipPortID, lb.VipAddress, lb.VipSubnetID, lb.VipNetworkID = port.ID, vip.addr, vip.subnetID, port.NetworkID
	if lb.VipAddress == "" {
		lb.VipAddress = port.FixedIPs[0].IPAddress
	}
	s.st.lbs.Put(lb.ID, lb)
	s.st.octaviaQuotaRows[lb.ProjectID] = true
	var made []*Listener
	var madePools []*Pool
	for i := range req.Listeners {
		l := s.newListener(lb, &req.Listeners[i])
		made = append(made, l)
		if p, ok := s.st.pools.Get(l.DefaultPoolID); ok {
			madePools = append(madePools, p)
		}
	}
	for i := range req.Pools {
		madePools = append(madePools, s.newPool(lb, &req.Pools[i]))
	}
	s.pend(lb, ProvisioningPendingCreate)
	m := s.lbJSON(lb)
	if len(made) > 0 || len(madePools) > 0 {
		// A fully populated create answers with the whole tree, as
		// Octavia's LoadBalancerFullResponse: pools with their members and
		// health monitor.
		listeners, pools := []map[string]any{}, []map[string]any{}
		for _, l := range made {
			listeners = append(listeners, s.listenerJSON(l))
		}
		for _, p := range madePools {
			pools = append(pools, s.poolFullJSON(p))
		}
		m["listeners"], m["pools"] = listeners, pools
	}
	return m, lb, nil
}

// checkLBChildren validates the listeners and pools of a fully populated
// create.
func (s *Server) checkLBChildren(req *lbCreate, provider, vip string) *response {
	var others []*Listener
	for i := range req.Listeners {
		lr := &req.Listeners[i]
		if lr.DefaultPoolID != "" {
			return invalid("default_pool_id is not allowed in a fully populated load balancer create; use default_pool.")
		}
		if errResp := s.checkListener(lr, provider, vip, others); errResp != nil {
			return errResp
		}
		if lr.DefaultPool != nil {
			if errResp := s.checkPool(lr.DefaultPool, provider, lr.Protocol); errResp != nil {
				return errResp
			}
		}
		others = append(others, &Listener{Protocol: lr.Protocol, ProtocolPort: lr.ProtocolPort})
	}
	for i := range req.Pools {
		if errResp := s.checkPool(&req.Pools[i], provider, ""); errResp != nil {
			return errResp
		}
	}
	return nil
}

// vipSpec is where a new load balancer's VIP goes.
type vipSpec struct {
	subnetID, networkID, portID, addr string
}

func (s *Server) resolveVIP(req *lbCreate) (vipSpec, *response) {
	notFound := func(kind, id string) (vipSpec, *response) {
		r := octaviaError(http.StatusBadRequest, "%s %s not found.", kind, id)
		return vipSpec{}, &r
	}
	v := vipSpec{subnetID: req.VipSubnetID, networkID: req.VipNetworkID, portID: req.VipPortID, addr: req.VipAddress}
	switch {
	case v.portID != "":
		p, ok := s.st.ports.Get(v.portID)
		if !ok {
			return notFound("Port", v.portID)
		}
		if len(p.FixedIPs) == 0 {
			return vipSpec{}, invalid("Port %s has no fixed IPs.", p.ID)
		}
		v.networkID, v.subnetID, v.addr = p.NetworkID, p.FixedIPs[0].SubnetID, p.FixedIPs[0].IPAddress
	case v.subnetID != "":
		sr, ok := s.st.subnets.Get(v.subnetID)
		if !ok {
			return notFound("Subnet", v.subnetID)
		}
		v.networkID = sr.NetworkID
	case v.networkID != "":
		if _, ok := s.st.networks.Get(v.networkID); !ok {
			return notFound("Network", v.networkID)
		}
		sr := s.st.firstSubnet(v.networkID, 4)
		if sr == nil {
			sr = s.st.firstSubnet(v.networkID, 6)
		}
		if sr == nil {
			return vipSpec{}, invalid("Supplied network does not contain a subnet.")
		}
		v.subnetID = sr.ID
	default:
		return vipSpec{}, invalid("VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
	}
	if v.addr != "" && v.portID == "" {
		sr, _ := s.st.subnets.Get(v.subnetID)
		if a, err := netip.ParseAddr(v.addr); err != nil || !sr.prefix.Contains(a) {
			return vipSpec{}, invalid("VIP address %s is not in subnet %s.", v.addr, v.subnetID)
		}
	}
	return v, nil
}

// vipPort is the user's VIP port, or a new Neutron port Octavia owns.
func (s *Server) vipPort(lb *lbRec, v vipSpec) (*Port, *response) {
	if v.portID != "" {
		p, _ := s.st.ports.Get(v.portID)
		return p, nil
	}
	p, errResp := s.newPort(Port{
		NetworkID: v.networkID, Name: "octavia-lb-" + lb.ID, DeviceID: "lb-" + lb.ID, DeviceOwner: OwnerOctavia,
		SecurityGroups: []string{}, Status: "DOWN",
	}, []FixedIP{{SubnetID: v.subnetID, IPAddress: v.addr}})
	if errResp != nil {
		r := octaviaError(errResp.Status, "Error allocating the VIP: %v", errResp.Body)
		if errResp.Status == http.StatusConflict {
			r = octaviaError(http.StatusConflict, "IP address %s already allocated in subnet %s", v.addr, v.subnetID)
		}
		return nil, &r
	}
	lb.ownsVIP = true
	return p, nil
}

func (s *Server) updateLoadBalancer(r *http.Request) response {
	lb, ok := s.st.lbs.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Load Balancer", r.PathValue("id"))
	}
	obj, err := decodeEnvelope(r, "loadbalancer")
	if err != nil {
		return badBody("PUT "+lbPrefix, err)
	}
	next, err := patch(lb.LoadBalancer, obj, "name", "description", "admin_state_up", "tags", "vip_qos_policy_id")
	if err != nil {
		return octaviaInvalid("%v", err)
	}
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	next.Tags = nonNil(next.Tags)
	lb.LoadBalancer = next
	s.pend(lb, ProvisioningPendingUpdate)
	return jsonOK(map[string]any{"loadbalancer": s.lbJSON(lb)})
}

// deleteLoadBalancer needs ?cascade=true when the load balancer still
// has listeners or pools (400 otherwise).
func (s *Server) deleteLoadBalancer(r *http.Request) response {
	lb, ok := s.st.lbs.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Load Balancer", r.PathValue("id"))
	}
	if errResp := s.mutable(lb, true); errResp != nil {
		return *errResp
	}
	v := s.lbView(lb)
	cascade := r.URL.Query().Get("cascade") == "true" || r.URL.Query().Get("cascade") == "True"
	if !cascade && (len(v.Listeners) > 0 || len(v.Pools) > 0) {
		return octaviaInvalid("Cannot delete Load Balancer %s - it has children", lb.ID)
	}
	for _, l := range s.st.listeners.In(lb.ID) {
		l.ProvisioningStatus = ProvisioningPendingDelete
	}
	for _, p := range s.st.pools.In(lb.ID) {
		p.ProvisioningStatus = ProvisioningPendingDelete
		for _, m := range s.st.members.In(p.ID) {
			m.ProvisioningStatus = ProvisioningPendingDelete
		}
		if hm := s.poolMonitor(p.ID); hm != nil {
			hm.ProvisioningStatus = ProvisioningPendingDelete
		}
	}
	s.pend(lb, ProvisioningPendingDelete)
	return noContent()
}
