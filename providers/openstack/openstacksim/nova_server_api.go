package openstacksim

import (
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// server is the server of the request's {id}, if the token's project owns
// it: Nova looks instances up within the caller's project, so another
// project's server is 404 as a missing one is.
func (s *Server) server(r *http.Request) (*serverRec, *response) {
	v, ok := s.st.servers.Get(r.PathValue("id"))
	if !ok || v.project != s.tokenProject(r) {
		resp := novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
		return nil, &resp
	}
	return v, nil
}

// getServer counts a read of the server (see nova_tasks.go).
func (s *Server) getServer(r *http.Request, minor int) response {
	v, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	if !s.readServer(v) {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", v.ID)
	}
	return jsonOK(map[string]any{"server": s.serverJSON(r, v, minor, true)})
}

// serverAction serves os-stop and os-start (202, done as a task: see
// nova_tasks.go), 409 when the server is not in a state to do it; the
// admin actions (os-resetState, migrate, …)
// are 403 for the member the simulator's users are.
func (s *Server) serverAction(r *http.Request, _ int) response {
	v, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	var body map[string]any
	if err := simkit.Decode(r, &body); err != nil {
		return novaError(http.StatusBadRequest, "Invalid request body: %v", err)
	}
	for action, rule := range novaAdminActions {
		if hasKey(body, action) {
			return policyForbidden("os_compute_api:" + rule)
		}
	}
	switch {
	case hasKey(body, "os-stop"):
		return s.stopServer(v)
	case hasKey(body, "os-start"):
		return s.startServer(v)
	}
	return novaError(http.StatusBadRequest, "There is no such action: %v", slices.Sorted(mapKeys(body)))
}

func (s *Server) serverMetadata(r *http.Request, _ int) response {
	v, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"metadata": nonNilMap(v.Metadata)})
}

// serverInterfaces lists the server's ports; from 2.70 each has its
// device tag (null: the simulator's ports are untagged).
func (s *Server) serverInterfaces(r *http.Request, minor int) response {
	v, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	out := []map[string]any{}
	for _, p := range s.st.ports.All() {
		if p.DeviceID == v.ID {
			att := map[string]any{"port_id": p.ID, "net_id": p.NetworkID, "mac_addr": p.MACAddress, "port_state": p.Status, "fixed_ips": p.FixedIPs}
			if minor >= 70 {
				att["tag"] = nil
			}
			out = append(out, att)
		}
	}
	return jsonOK(map[string]any{"interfaceAttachments": out})
}
