package openstacksim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func (s *Server) listListeners(r *http.Request) response {
	items := []map[string]any{}
	for _, l := range s.st.listeners.All() {
		m := s.listenerJSON(l)
		m["loadbalancer_id"] = l.LoadBalancerID // filterable, as Octavia allows
		items = append(items, m)
	}
	return s.octaviaList(r, "listeners", items, "loadbalancer_id")
}

func (s *Server) getListener(r *http.Request) response {
	l, ok := s.st.listeners.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Listener", r.PathValue("id"))
	}
	return jsonOK(map[string]any{"listener": s.listenerJSON(l)})
}

func (s *Server) createListener(r *http.Request) response {
	var body struct {
		Listener *listenerCreate `json:"listener"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.Listener == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute listener. Value: 'None'. Mandatory field missing.")
	}
	req := body.Listener
	if req.DefaultPool != nil {
		return octaviaInvalid("default_pool is only allowed in a fully populated load balancer create.")
	}
	lb, ok := s.st.lbs.Get(req.LoadBalancerID)
	if !ok {
		return octaviaError(http.StatusBadRequest, "Load Balancer %s not found.", req.LoadBalancerID)
	}
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	if errResp := s.checkListener(req, lb.Provider, lb.VipAddress, s.lbListeners(lb.ID, "")); errResp != nil {
		return *errResp
	}
	if errResp := s.checkDefaultPool(lb, req.DefaultPoolID, req.Protocol, ""); errResp != nil {
		return *errResp
	}
	l := s.newListener(lb, req)
	s.pend(lb, ProvisioningPendingUpdate)
	return created(map[string]any{"listener": s.listenerJSON(l)})
}

// lbListeners are the listeners of a load balancer but except.
func (s *Server) lbListeners(lbID, except string) []*Listener {
	var out []*Listener
	for _, l := range s.st.listeners.In(lbID) {
		if l.ID != except {
			out = append(out, l)
		}
	}
	return out
}

// checkDefaultPool validates a listener's default_pool_id: a pool of the
// same load balancer, of a protocol the listener accepts, not the default
// pool of another listener.
func (s *Server) checkDefaultPool(lb *lbRec, poolID, protocol, listenerID string) *response {
	if poolID == "" {
		return nil
	}
	p, ok := s.st.pools.Get(poolID)
	if !ok || p.LoadBalancerID != lb.ID {
		r := octaviaError(http.StatusBadRequest, "Pool %s not found.", poolID)
		return &r
	}
	if !contains(listenerPools[protocol], p.Protocol) {
		return invalid("The pool protocol '%s' is invalid while the listener protocol is '%s'.", p.Protocol, protocol)
	}
	for _, l := range s.st.listeners.In(lb.ID) {
		if l.DefaultPoolID == poolID && l.ID != listenerID {
			r := octaviaError(http.StatusConflict, "Pool %s is already used by listener %s.", poolID, l.ID)
			return &r
		}
	}
	return nil
}

// listenerWritable are the attributes PUT /listeners/{id} may change.
var listenerWritable = []string{
	"name", "description", "admin_state_up", "connection_limit", "default_pool_id", "default_tls_container_ref",
	"sni_container_refs", "timeout_client_data", "timeout_member_connect", "timeout_member_data",
	"timeout_tcp_inspect", "insert_headers", "allowed_cidrs", "tags",
	// accepted and not modelled:
	"alpn_protocols", "client_authentication", "client_ca_tls_container_ref", "client_crl_container_ref",
	"hsts_include_subdomains", "hsts_max_age", "hsts_preload", "tls_ciphers", "tls_versions",
}

func (s *Server) updateListener(r *http.Request) response {
	l, ok := s.st.listeners.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Listener", r.PathValue("id"))
	}
	obj, err := decodeEnvelope(r, "listener")
	if err != nil {
		return badBody("PUT "+lbPrefix, err)
	}
	next, err := patch(*l, obj, listenerWritable...)
	if err != nil {
		return octaviaInvalid("%v", err)
	}
	lb := s.lbOf(l.LoadBalancerID)
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	check := listenerCreate{
		Protocol: next.Protocol, ProtocolPort: next.ProtocolPort, DefaultTLSContainerRef: next.DefaultTLSContainerRef,
		SNIContainerRefs: next.SNIContainerRefs, ConnectionLimit: &next.ConnectionLimit, AllowedCIDRs: next.AllowedCIDRs,
		TimeoutClientData: &next.TimeoutClientData, TimeoutMemberConnect: &next.TimeoutMemberConnect,
		TimeoutMemberData: &next.TimeoutMemberData, TimeoutTCPInspect: &next.TimeoutTCPInspect,
	}
	if errResp := s.checkListener(&check, lb.Provider, lb.VipAddress, nil); errResp != nil {
		return *errResp
	}
	if errResp := s.checkDefaultPool(lb, next.DefaultPoolID, next.Protocol, l.ID); errResp != nil {
		return *errResp
	}
	if len(next.AllowedCIDRs) == 0 {
		next.AllowedCIDRs = nil
	}
	next.Tags, next.SNIContainerRefs = nonNil(next.Tags), nonNil(next.SNIContainerRefs)
	if next.InsertHeaders == nil {
		next.InsertHeaders = map[string]string{}
	}
	*l = next
	l.touch()
	s.pend(lb, ProvisioningPendingUpdate)
	return jsonOK(map[string]any{"listener": s.listenerJSON(l)})
}

func (s *Server) deleteListener(r *http.Request) response {
	l, ok := s.st.listeners.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Listener", r.PathValue("id"))
	}
	lb := s.lbOf(l.LoadBalancerID)
	if errResp := s.mutable(lb, false); errResp != nil {
		return *errResp
	}
	l.ProvisioningStatus = ProvisioningPendingDelete
	s.pend(lb, ProvisioningPendingUpdate)
	return noContent()
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
