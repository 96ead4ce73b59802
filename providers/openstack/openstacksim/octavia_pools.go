package openstacksim

import (
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func (s *Server) listPools(r *http.Request) response {
	byLB, filtered := r.URL.Query()["loadbalancer_id"]
	items := []map[string]any{}
	for _, p := range s.st.pools.All() {
		if filtered && !slices.ContainsFunc(byLB, func(w string) bool { return valueMatches(p.LoadBalancerID, w) }) {
			// The filter drops it, and it only holds a place for a
			// marker: its members (5,000 of each of 1,000 pools at
			// bench scale) are not read.
			items = append(items, map[string]any{"id": p.ID, "loadbalancer_id": p.LoadBalancerID})
			continue
		}
		m := s.poolJSON(p)
		m["loadbalancer_id"] = p.LoadBalancerID
		for _, l := range s.st.listeners.In(p.LoadBalancerID) {
			if l.DefaultPoolID == p.ID {
				m["listener_id"] = l.ID
			}
		}
		items = append(items, m)
	}
	return s.octaviaList(r, "pools", items, "loadbalancer_id", "listener_id")
}

func (s *Server) getPool(r *http.Request) response {
	p, ok := s.st.pools.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Pool", r.PathValue("id"))
	}
	return jsonOK(map[string]any{"pool": s.poolJSON(p)})
}

// createPool creates a pool on a load balancer, or as a listener's
// default pool (listener_id).
func (s *Server) createPool(r *http.Request) response {
	var body struct {
		Pool *poolCreate `json:"pool"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.Pool == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute pool. Value: 'None'. Mandatory field missing.")
	}
	req := body.Pool
	var listener *Listener
	lbID := req.LoadBalancerID
	if req.ListenerID != "" {
		l, ok := s.st.listeners.Get(req.ListenerID)
		if !ok {
			return octaviaError(http.StatusBadRequest, "Listener %s not found.", req.ListenerID)
		}
		listener, lbID = l, l.LoadBalancerID
	}
	if lbID == "" {
		return octaviaInvalid("Either listener_id or loadbalancer_id must be specified.")
	}
	lb, ok := s.st.lbs.Get(lbID)
	if !ok || req.LoadBalancerID != "" && req.LoadBalancerID != lbID {
		return octaviaError(http.StatusBadRequest, "Load Balancer %s not found.", req.LoadBalancerID)
	}
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	listenerProtocol := ""
	if listener != nil {
		if listener.DefaultPoolID != "" {
			return octaviaError(http.StatusConflict, "This listener already has a default pool")
		}
		listenerProtocol = listener.Protocol
	}
	if errResp := s.checkPool(req, lb.Provider, listenerProtocol); errResp != nil {
		return *errResp
	}
	p := s.newPool(lb, req)
	if listener != nil {
		listener.DefaultPoolID = p.ID
		listener.touch()
	}
	s.pend(lb, ProvisioningPendingUpdate)
	return created(map[string]any{"pool": s.poolJSON(p)})
}

func (s *Server) updatePool(r *http.Request) response {
	p, ok := s.st.pools.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Pool", r.PathValue("id"))
	}
	obj, err := decodeEnvelope(r, "pool")
	if err != nil {
		return badBody("PUT "+lbPrefix, err)
	}
	next, err := patch(*p, obj, "name", "description", "admin_state_up", "lb_algorithm", "session_persistence", "tags",
		"tls_enabled", "tls_container_ref", "ca_tls_container_ref", "crl_container_ref", "alpn_protocols", "tls_ciphers", "tls_versions")
	if err != nil {
		return octaviaInvalid("%v", err)
	}
	lb := s.lbOf(p.LoadBalancerID)
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	check := poolCreate{Protocol: next.Protocol, LBAlgorithm: next.LBAlgorithm, SessionPersistence: next.SessionPersistence}
	if errResp := s.checkPool(&check, lb.Provider, ""); errResp != nil {
		return *errResp
	}
	next.Tags = nonNil(next.Tags)
	*p = next
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return jsonOK(map[string]any{"pool": s.poolJSON(p)})
}

// deletePool deletes a pool with its members and monitor; listeners
// using it lose their default pool.
func (s *Server) deletePool(r *http.Request) response {
	p, ok := s.st.pools.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Pool", r.PathValue("id"))
	}
	lb := s.lbOf(p.LoadBalancerID)
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	s.touchPoolParents(p)
	p.ProvisioningStatus = ProvisioningPendingDelete
	for _, m := range s.st.members.In(p.ID) {
		m.ProvisioningStatus = ProvisioningPendingDelete
	}
	if hm := s.poolMonitor(p.ID); hm != nil {
		hm.ProvisioningStatus = ProvisioningPendingDelete
	}
	s.pend(lb, ProvisioningPendingUpdate)
	return noContent()
}

// poolForChange is the pool of a member or monitor change and its load
// balancer, or the answer: 404 without the pool, 409 unless mutable.
func (s *Server) poolForChange(poolID string, notFound func() response) (*Pool, *lbRec, *response) {
	p, ok := s.st.pools.Get(poolID)
	if !ok {
		r := notFound()
		return nil, nil, &r
	}
	lb := s.lbOf(p.LoadBalancerID)
	if errResp := s.mutable(lb, false); errResp != nil {
		return nil, nil, errResp
	}
	return p, lb, nil
}

func (s *Server) createMonitor(r *http.Request) response {
	var body struct {
		HM *monitorCreate `json:"healthmonitor"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.HM == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute healthmonitor. Value: 'None'. Mandatory field missing.")
	}
	req := body.HM
	p, lb, errResp := s.poolForChange(req.PoolID, func() response {
		return octaviaError(http.StatusBadRequest, "Pool %s not found.", req.PoolID)
	})
	if errResp != nil {
		return *errResp
	}
	if s.poolMonitor(p.ID) != nil {
		return octaviaError(http.StatusConflict, "This pool already has a health monitor")
	}
	if errResp := checkMonitor(req, p.Protocol); errResp != nil {
		return *errResp
	}
	hm := s.newMonitor(p, req)
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return created(map[string]any{"healthmonitor": monitorJSON(hm)})
}

func (s *Server) listMonitors(r *http.Request) response {
	items := []map[string]any{}
	for _, hm := range s.st.monitors.All() {
		m := monitorJSON(hm)
		m["pool_id"] = hm.PoolID
		items = append(items, m)
	}
	return s.octaviaList(r, "healthmonitors", items, "pool_id")
}

func (s *Server) getMonitor(r *http.Request) response {
	hm, ok := s.st.monitors.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Health Monitor", r.PathValue("id"))
	}
	return jsonOK(map[string]any{"healthmonitor": monitorJSON(hm)})
}

func (s *Server) updateMonitor(r *http.Request) response {
	hm, ok := s.st.monitors.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Health Monitor", r.PathValue("id"))
	}
	obj, err := decodeEnvelope(r, "healthmonitor")
	if err != nil {
		return badBody("PUT "+lbPrefix, err)
	}
	if err := numberFields(obj, "http_version"); err != nil {
		return octaviaInvalid("%v", err)
	}
	next, err := patch(*hm, obj, "name", "delay", "timeout", "max_retries", "max_retries_down", "http_method",
		"url_path", "expected_codes", "domain_name", "http_version", "admin_state_up", "tags")
	if err != nil {
		return octaviaInvalid("%v", err)
	}
	p, lb, errResp := s.poolForChange(hm.PoolID, func() response { return octaviaNotFound("Pool", hm.PoolID) })
	if errResp != nil {
		return *errResp
	}
	check := monitorCreate{
		Type: next.Type, Delay: next.Delay, Timeout: next.Timeout, MaxRetries: next.MaxRetries, MaxRetriesDown: &next.MaxRetriesDown,
		HTTPMethod: next.HTTPMethod, URLPath: next.URLPath, ExpectedCodes: next.ExpectedCodes, DomainName: next.DomainName,
	}
	if errResp := checkMonitor(&check, p.Protocol); errResp != nil {
		return *errResp
	}
	next.Tags = nonNil(next.Tags)
	*hm = next
	hm.touch()
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return jsonOK(map[string]any{"healthmonitor": monitorJSON(hm)})
}

func (s *Server) deleteMonitor(r *http.Request) response {
	hm, ok := s.st.monitors.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Health Monitor", r.PathValue("id"))
	}
	p, lb, errResp := s.poolForChange(hm.PoolID, func() response { return octaviaNotFound("Pool", hm.PoolID) })
	if errResp != nil {
		return *errResp
	}
	hm.ProvisioningStatus = ProvisioningPendingDelete
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return noContent()
}
