package openstacksim

// Builders of Octavia objects from valid requests. New objects start
// PENDING_CREATE and OFFLINE; the caller holds s.mu and puts the load
// balancer in PENDING_*.

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (s *Server) newListener(lb *lbRec, req *listenerCreate) *Listener {
	l := &Listener{
		ID: s.st.newID(kListener), LoadBalancerID: lb.ID, Name: req.Name, Description: req.Description,
		ProjectID: lb.ProjectID, Protocol: req.Protocol, ProtocolPort: req.ProtocolPort, DefaultPoolID: req.DefaultPoolID,
		ConnectionLimit: intOr(req.ConnectionLimit, -1), AdminStateUp: boolOr(req.AdminStateUp, true),
		DefaultTLSContainerRef: req.DefaultTLSContainerRef, SNIContainerRefs: nonNil(req.SNIContainerRefs),
		TimeoutClientData: intOr(req.TimeoutClientData, 50000), TimeoutMemberConnect: intOr(req.TimeoutMemberConnect, 5000),
		TimeoutMemberData: intOr(req.TimeoutMemberData, 50000), TimeoutTCPInspect: intOr(req.TimeoutTCPInspect, 0),
		InsertHeaders: req.InsertHeaders, OctaviaAttributes: newOctaviaAttributes(req.Tags),
	}
	if l.InsertHeaders == nil {
		l.InsertHeaders = map[string]string{}
	}
	if len(req.AllowedCIDRs) > 0 {
		l.AllowedCIDRs = append([]string(nil), req.AllowedCIDRs...)
	}
	s.st.listeners.Put(l.ID, l)
	if req.DefaultPool != nil {
		p := s.newPool(lb, req.DefaultPool)
		l.DefaultPoolID = p.ID
	}
	return l
}

func (s *Server) newPool(lb *lbRec, req *poolCreate) *Pool {
	p := &Pool{
		ID: s.st.newID(kPool), LoadBalancerID: lb.ID, Name: req.Name, Description: req.Description, ProjectID: lb.ProjectID,
		Protocol: req.Protocol, LBAlgorithm: req.LBAlgorithm, SessionPersistence: req.SessionPersistence,
		AdminStateUp: boolOr(req.AdminStateUp, true), OctaviaAttributes: newOctaviaAttributes(req.Tags),
	}
	s.st.pools.Put(p.ID, p)
	for i := range req.Members {
		s.newMember(p, &req.Members[i])
	}
	if req.HealthMonitor != nil {
		s.newMonitor(p, req.HealthMonitor)
	}
	return p
}

func (s *Server) newMember(p *Pool, req *memberCreate) *Member {
	m := &Member{
		ID: s.st.newID(kMember), PoolID: p.ID, Name: req.Name, ProjectID: p.ProjectID, Address: req.Address,
		ProtocolPort: req.ProtocolPort, SubnetID: req.SubnetID, Weight: intOr(req.Weight, 1), Backup: req.Backup,
		AdminStateUp: boolOr(req.AdminStateUp, true), MonitorAddress: req.MonitorAddress, MonitorPort: intOr(req.MonitorPort, 0),
		OctaviaAttributes: newOctaviaAttributes(req.Tags),
	}
	s.st.members.Put(m.ID, m)
	return m
}

func (s *Server) newMonitor(p *Pool, req *monitorCreate) *HealthMonitor {
	hm := &HealthMonitor{
		ID: s.st.newID(kHealthMonitor), PoolID: p.ID, Name: req.Name, ProjectID: p.ProjectID, Type: req.Type,
		Delay: req.Delay, Timeout: req.Timeout, MaxRetries: req.MaxRetries, MaxRetriesDown: intOr(req.MaxRetriesDown, 3),
		DomainName: req.DomainName, HTTPVersion: float64(req.HTTPVersion), AdminStateUp: boolOr(req.AdminStateUp, true),
		OctaviaAttributes: newOctaviaAttributes(req.Tags),
	}
	if req.Type == "HTTP" || req.Type == "HTTPS" {
		hm.HTTPMethod, hm.URLPath, hm.ExpectedCodes = cmpOr(req.HTTPMethod, "GET"), cmpOr(req.URLPath, "/"), cmpOr(req.ExpectedCodes, "200")
	}
	s.st.monitors.Put(hm.ID, hm)
	return hm
}

// touchPoolParents marks a pool and the listeners using it as default
// pool PENDING_UPDATE, as Octavia does when a member or monitor changes.
func (s *Server) touchPoolParents(p *Pool) {
	if !isPending(p.ProvisioningStatus) {
		p.touch()
	}
	for _, l := range s.st.listeners.In(p.LoadBalancerID) {
		if l.DefaultPoolID == p.ID && !isPending(l.ProvisioningStatus) {
			l.touch()
		}
	}
}
