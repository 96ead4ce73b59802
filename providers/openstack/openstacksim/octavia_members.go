package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func (s *Server) poolNotFound(id string) func() response {
	return func() response { return octaviaNotFound("Pool", id) }
}

func (s *Server) listMembers(r *http.Request) response {
	p, ok := s.st.pools.Get(r.PathValue("id"))
	if !ok {
		return octaviaNotFound("Pool", r.PathValue("id"))
	}
	items := []map[string]any{}
	for _, m := range s.st.members.In(p.ID) {
		items = append(items, memberJSON(m))
	}
	return s.octaviaList(r, "members", items)
}

// member is a member of the request's pool.
func (s *Server) member(r *http.Request) (*Member, bool) {
	m, ok := s.st.members.Get(r.PathValue("mid"))
	return m, ok && m.PoolID == r.PathValue("id")
}

func (s *Server) getMember(r *http.Request) response {
	m, ok := s.member(r)
	if !ok {
		return octaviaNotFound("Member", r.PathValue("mid"))
	}
	return jsonOK(map[string]any{"member": memberJSON(m)})
}

func (s *Server) createMember(r *http.Request) response {
	var body struct {
		Member *memberCreate `json:"member"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.Member == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute member. Value: 'None'. Mandatory field missing.")
	}
	p, lb, errResp := s.poolForChange(r.PathValue("id"), s.poolNotFound(r.PathValue("id")))
	if errResp != nil {
		return *errResp
	}
	req := body.Member
	if errResp := s.checkMember(req); errResp != nil {
		return *errResp
	}
	for _, m := range s.st.members.In(p.ID) {
		if m.Address == req.Address && m.ProtocolPort == req.ProtocolPort {
			return octaviaError(http.StatusConflict, "Another member on this pool is already using ip address %s on protocol_port %d", req.Address, req.ProtocolPort)
		}
	}
	m := s.newMember(p, req)
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return created(map[string]any{"member": memberJSON(m)})
}

// memberWritable are the attributes a member update may change.
var memberWritable = []string{"name", "weight", "backup", "admin_state_up", "monitor_address", "monitor_port", "tags"}

func (s *Server) updateMember(r *http.Request) response {
	m, ok := s.member(r)
	if !ok {
		return octaviaNotFound("Member", r.PathValue("mid"))
	}
	obj, err := decodeEnvelope(r, "member")
	if err != nil {
		return badBody("PUT "+lbPrefix, err)
	}
	next, err := patch(*m, obj, memberWritable...)
	if err != nil {
		return octaviaInvalid("%v", err)
	}
	p, lb, errResp := s.poolForChange(m.PoolID, s.poolNotFound(m.PoolID))
	if errResp != nil {
		return *errResp
	}
	check := memberCreate{Address: next.Address, ProtocolPort: next.ProtocolPort, Weight: &next.Weight}
	if next.MonitorPort != 0 {
		check.MonitorPort = &next.MonitorPort
	}
	if errResp := s.checkMember(&check); errResp != nil {
		return *errResp
	}
	next.Tags = nonNil(next.Tags)
	*m = next
	m.touch()
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return jsonOK(map[string]any{"member": memberJSON(m)})
}

func (s *Server) deleteMember(r *http.Request) response {
	m, ok := s.member(r)
	if !ok {
		return octaviaNotFound("Member", r.PathValue("mid"))
	}
	p, lb, errResp := s.poolForChange(m.PoolID, s.poolNotFound(m.PoolID))
	if errResp != nil {
		return *errResp
	}
	m.ProvisioningStatus = ProvisioningPendingDelete
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return noContent()
}

// batchUpdateMembers is PUT /pools/{id}/members {"members":[…]}: the
// pool's members become the request's. Members are matched by address
// and protocol_port: matches are updated, the rest created, and members
// not in the request deleted (kept with ?additive_only=true). As in
// Octavia, an updated member takes the request's weight, backup and
// admin_state_up (defaults when absent) and keeps the name, monitor
// address and port and tags the request leaves out (null clears them).
// 202, no body.
func (s *Server) batchUpdateMembers(r *http.Request) response {
	var body struct {
		Members *[]json.RawMessage `json:"members"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.Members == nil {
		return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute members. Value: 'None'. Mandatory field missing.")
	}
	reqs := make([]memberCreate, len(*body.Members))
	present := make([]map[string]json.RawMessage, len(*body.Members))
	for i, raw := range *body.Members {
		if json.Unmarshal(raw, &reqs[i]) != nil || json.Unmarshal(raw, &present[i]) != nil {
			return octaviaError(http.StatusBadRequest, "Invalid input for field/attribute members. Value: '%s'.", raw)
		}
	}
	p, lb, errResp := s.poolForChange(r.PathValue("id"), s.poolNotFound(r.PathValue("id")))
	if errResp != nil {
		return *errResp
	}
	key := func(addr string, port int) string { return fmt.Sprintf("%s:%d", addr, port) }
	seen := map[string]bool{}
	for i := range reqs {
		if errResp := s.checkMember(&reqs[i]); errResp != nil {
			return *errResp
		}
		k := key(reqs[i].Address, reqs[i].ProtocolPort)
		if seen[k] {
			return octaviaInvalid("Member address/port combination %s is duplicated in the request.", k)
		}
		seen[k] = true
	}
	additive := r.URL.Query().Get("additive_only") == "true" || r.URL.Query().Get("additive_only") == "True"
	current := map[string]*Member{}
	for _, m := range s.st.members.In(p.ID) {
		current[key(m.Address, m.ProtocolPort)] = m
		if !seen[key(m.Address, m.ProtocolPort)] && !additive {
			m.ProvisioningStatus = ProvisioningPendingDelete
		}
	}
	for i := range reqs {
		req := &reqs[i]
		m, ok := current[key(req.Address, req.ProtocolPort)]
		if !ok {
			s.newMember(p, req)
			continue
		}
		m.Weight, m.Backup, m.AdminStateUp = intOr(req.Weight, 1), req.Backup, boolOr(req.AdminStateUp, true)
		has := func(k string) bool { _, ok := present[i][k]; return ok }
		if has("name") {
			m.Name = req.Name
		}
		if has("monitor_address") {
			m.MonitorAddress = req.MonitorAddress
		}
		if has("monitor_port") {
			m.MonitorPort = intOr(req.MonitorPort, 0)
		}
		if has("tags") {
			m.Tags = nonNil(req.Tags)
		}
		m.touch()
	}
	s.touchPoolParents(p)
	s.pend(lb, ProvisioningPendingUpdate)
	return simkit.NoContent(http.StatusAccepted)
}
