package openstacksim

import (
	"net/http"
	"slices"
)

// The Octavia provisioning state machine. Every change to a load balancer
// or a child puts the load balancer (and the changed children) in
// PENDING_*; any further change to that tree is refused with 409 until it
// settles: after Options.ProvisioningReads reads of the load balancer, or
// on Advance (the state's simkit.Lifecycle). It settles to ACTIVE, or ERROR when FailProvisioning
// matches it; a PENDING_DELETE load balancer (or child) is then gone.

// mutable answers 409 ImmutableObject unless lb is ACTIVE (or, when
// deleting the load balancer itself, ERROR).
func (s *Server) mutable(lb *lbRec, deleting bool) *response {
	if lb.ProvisioningStatus == ProvisioningActive || deleting && lb.ProvisioningStatus == ProvisioningError {
		return nil
	}
	r := octaviaImmutable("Load Balancer", lb.ID)
	return &r
}

// pend puts lb in status (PENDING_*) after a change; with a negative
// ProvisioningReads it settles at once.
func (s *Server) pend(lb *lbRec, status string) {
	lb.ProvisioningStatus = status
	if status != ProvisioningPendingCreate {
		lb.UpdatedAt = s.st.octaviaTick()
	}
	s.st.pending.Start(lb.ID, func() { s.settle(lb) })
}

// read counts a read of lb; the ProvisioningReads-th read of a pending lb
// settles it. It reports whether lb still exists.
func (s *Server) read(lb *lbRec) bool {
	s.st.pending.Read(lb.ID)
	_, exists := s.st.lbs.Get(lb.ID)
	return exists
}

// settle ends lb's pending state and its children's.
func (s *Server) settle(lb *lbRec) {
	s.st.pending.Stop(lb.ID)
	if !isPending(lb.ProvisioningStatus) {
		return
	}
	fail := s.failing(lb)
	if lb.ProvisioningStatus == ProvisioningPendingDelete && !fail {
		s.removeLB(lb)
		return
	}
	final := ProvisioningActive
	if fail {
		final = ProvisioningError
	}
	for _, l := range s.st.listeners.In(lb.ID) {
		settleChild(&l.ProvisioningStatus, final, func() { s.st.listeners.Del(l.ID) })
	}
	for _, p := range s.st.pools.In(lb.ID) {
		for _, m := range s.st.members.In(p.ID) {
			settleChild(&m.ProvisioningStatus, final, func() { s.st.members.Del(m.ID) })
		}
		if hm := s.poolMonitor(p.ID); hm != nil {
			settleChild(&hm.ProvisioningStatus, final, func() { s.st.monitors.Del(hm.ID) })
		}
		settleChild(&p.ProvisioningStatus, final, func() { s.removePool(p) })
	}
	lb.ProvisioningStatus, lb.UpdatedAt = final, s.st.octaviaTick()
	s.refreshOperating(lb)
}

// settleChild moves a child out of PENDING_*: deleted ones are removed
// (unless the change failed), others take final.
func settleChild(status *string, final string, remove func()) {
	switch {
	case *status == ProvisioningPendingDelete && final == ProvisioningActive:
		remove()
	case isPending(*status):
		*status = final
	}
}

// refreshOperating sets operating statuses from provisioning ones: ONLINE
// when ACTIVE and up, members NO_MONITOR without a health monitor.
func (s *Server) refreshOperating(lb *lbRec) {
	op := func(prov string, up bool) string {
		switch {
		case prov == ProvisioningError:
			return OperatingError
		case !up || prov == ProvisioningPendingCreate:
			return OperatingOffline
		}
		return OperatingOnline
	}
	lb.OperatingStatus = op(lb.ProvisioningStatus, lb.AdminStateUp)
	for _, l := range s.st.listeners.In(lb.ID) {
		l.OperatingStatus = op(l.ProvisioningStatus, l.AdminStateUp)
	}
	for _, p := range s.st.pools.In(lb.ID) {
		p.OperatingStatus = op(p.ProvisioningStatus, p.AdminStateUp)
		hm := s.poolMonitor(p.ID)
		if hm != nil {
			hm.OperatingStatus = op(hm.ProvisioningStatus, hm.AdminStateUp)
		}
		for _, m := range s.st.members.In(p.ID) {
			m.OperatingStatus = op(m.ProvisioningStatus, m.AdminStateUp)
			if hm == nil && m.OperatingStatus == OperatingOnline {
				m.OperatingStatus = OperatingNoMonitor
			}
		}
	}
}

// removeLB deletes lb, its children and the VIP port Octavia made for it.
func (s *Server) removeLB(lb *lbRec) {
	for _, l := range s.st.listeners.In(lb.ID) {
		s.st.listeners.Del(l.ID)
	}
	for _, p := range s.st.pools.In(lb.ID) {
		s.removePool(p)
	}
	if p, ok := s.st.ports.Get(lb.VipPortID); ok && lb.ownsVIP {
		s.removePort(p)
	}
	s.st.lbs.Del(lb.ID)
}

// removePool deletes a pool with its members and health monitor, and
// unsets it as any listener's default pool.
func (s *Server) removePool(p *Pool) {
	for _, m := range s.st.members.In(p.ID) {
		s.st.members.Del(m.ID)
	}
	if hm := s.poolMonitor(p.ID); hm != nil {
		s.st.monitors.Del(hm.ID)
	}
	for _, l := range s.st.listeners.In(p.LoadBalancerID) {
		if l.DefaultPoolID == p.ID {
			l.DefaultPoolID = ""
		}
	}
	s.st.pools.Del(p.ID)
}

// failing reports whether a FailProvisioning fault matches lb.
func (s *Server) failing(lb *lbRec) bool {
	return slices.ContainsFunc(s.st.failLBs, func(ref *string) bool {
		return *ref == "*" || *ref == lb.ID || *ref == lb.Name
	})
}

// FailProvisioning makes the load balancers with ID or name ref ("*" for
// all) settle to ERROR instead of ACTIVE (a PENDING_DELETE one stays, in
// ERROR) until restore is called.
func (s *Server) FailProvisioning(ref string) (restore func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &ref
	s.st.failLBs = append(s.st.failLBs, p)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.st.failLBs = slices.DeleteFunc(s.st.failLBs, func(x *string) bool { return x == p })
	}
}

// Advance settles every pending load balancer, every server's task, and
// every volume's, snapshot's and volume attachment's, at once.
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.pending.Advance()
	s.st.serverTasks.Advance()
	s.st.volumeTasks.Advance()
}

// SetLoadBalancerStatus sets a load balancer's provisioning status (e.g.
// ERROR, or PENDING_UPDATE to make it immutable until it settles); false
// if there is no such load balancer.
func (s *Server) SetLoadBalancerStatus(id, provisioningStatus string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, ok := s.st.lbs.Get(id)
	if !ok {
		return false
	}
	lb.ProvisioningStatus, lb.UpdatedAt = provisioningStatus, s.st.octaviaTick()
	s.st.pending.Stop(id)
	if isPending(provisioningStatus) {
		// As after a change: it settles after ProvisioningReads reads.
		s.st.pending.Start(id, func() { s.settle(lb) })
	}
	s.refreshOperating(lb)
	return true
}

// loadBalancerStatus is GET …/loadbalancers/{id}/status, the status tree;
// it counts as a read.
func (s *Server) loadBalancerStatus(r *http.Request) response {
	lb, ok := s.st.lbs.Get(r.PathValue("id"))
	if !ok || !s.read(lb) {
		return octaviaNotFound("Load Balancer", r.PathValue("id"))
	}
	status := func(id, name, prov, op string) map[string]any {
		return map[string]any{"id": id, "name": name, "provisioning_status": prov, "operating_status": op}
	}
	var listeners []map[string]any
	for _, l := range s.st.listeners.In(lb.ID) {
		ls := status(l.ID, l.Name, l.ProvisioningStatus, l.OperatingStatus)
		var pools []map[string]any
		if p, ok := s.st.pools.Get(l.DefaultPoolID); ok {
			ps := status(p.ID, p.Name, p.ProvisioningStatus, p.OperatingStatus)
			var members []map[string]any
			for _, m := range s.st.members.In(p.ID) {
				ms := status(m.ID, m.Name, m.ProvisioningStatus, m.OperatingStatus)
				ms["address"], ms["protocol_port"] = m.Address, m.ProtocolPort
				members = append(members, ms)
			}
			ps["members"] = nonNil(members)
			if hm := s.poolMonitor(p.ID); hm != nil {
				ps["health_monitor"] = map[string]any{"id": hm.ID, "name": hm.Name, "type": hm.Type, "provisioning_status": hm.ProvisioningStatus, "operating_status": hm.OperatingStatus}
			}
			pools = append(pools, ps)
		}
		ls["pools"] = nonNil(pools)
		listeners = append(listeners, ls)
	}
	tree := status(lb.ID, lb.Name, lb.ProvisioningStatus, lb.OperatingStatus)
	tree["listeners"] = nonNil(listeners)
	return jsonOK(map[string]any{"statuses": map[string]any{"loadbalancer": tree}})
}
