package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
)

// AddRouter adds a router. If gatewayNetworkID is not "", the router gets
// an external gateway on it (with an address of its first subnet); it
// gets an interface on each of subnetIDs (at the subnet's gateway IP).
// It panics on unknown networks or subnets: it is for test setup.
func (s *Server) AddRouter(rt Router, gatewayNetworkID string, subnetIDs ...string) Router {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt.ID == "" {
		rt.ID = s.st.newID(kRouter)
	}
	rt.Status, rt.AdminStateUp = "ACTIVE", true
	rt.Routes, rt.AvailabilityZones = nonNil(rt.Routes), []string{"nova"}
	rt.AvailabilityZoneHints = nonNil(rt.AvailabilityZoneHints)
	rt.TaggedAttributes = newTaggedAttributes(rt.Tags, cmpOr(rt.ProjectID, s.st.projectID))
	if gatewayNetworkID != "" {
		p, errResp := s.newPort(Port{NetworkID: gatewayNetworkID, DeviceID: rt.ID, DeviceOwner: OwnerRouterGateway, SecurityGroups: []string{}}, nil)
		if errResp != nil {
			panic(fmt.Sprintf("openstacksim.AddRouter: gateway on %s: %v", gatewayNetworkID, errResp.Body))
		}
		rt.ExternalGatewayInfo = &GatewayInfo{NetworkID: gatewayNetworkID, EnableSNAT: true, ExternalFixedIPs: slices.Clone(p.FixedIPs)}
	}
	for _, id := range subnetIDs {
		sr, ok := s.st.subnets.Get(id)
		if !ok {
			panic(fmt.Sprintf("openstacksim.AddRouter: no subnet %q", id))
		}
		want := []FixedIP{{SubnetID: id, IPAddress: sr.GatewayIP}}
		if _, errResp := s.newPort(Port{NetworkID: sr.NetworkID, DeviceID: rt.ID, DeviceOwner: OwnerRouterInterface, SecurityGroups: []string{}}, want); errResp != nil {
			panic(fmt.Sprintf("openstacksim.AddRouter: interface on %s: %v", id, errResp.Body))
		}
	}
	s.st.routers.Put(rt.ID, &rt)
	return rt.clone()
}

// Routes returns a router's extra routes as destination CIDR -> next hop;
// nil if there is no such router.
func (s *Server) Routes(routerID string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.st.routers.Get(routerID)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, r := range rt.Routes {
		out[r.Destination] = r.NextHop
	}
	return out
}

// updateRouter is PUT /routers/{id}: name, description, admin state, tags
// and the whole extra route list.
func (s *Server) updateRouter(r *http.Request) response {
	rt, ok := s.st.routers.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Router", r.PathValue("id"))
	}
	if errResp := ifMatch(r, rt.RevisionNumber); errResp != nil {
		return *errResp
	}
	obj, err := decodeEnvelope(r, "router")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	next, err := patch(*rt, obj, "name", "description", "admin_state_up", "routes", "tags")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	if _, set := obj["routes"]; set {
		next.Routes = dedupRoutes(next.Routes)
		if errResp := s.checkRoutes(rt, next.Routes); errResp != nil {
			return *errResp
		}
	}
	next.Routes, next.Tags = nonNil(next.Routes), nonNil(next.Tags)
	return s.commitRouter(rt, next)
}

func (s *Server) commitRouter(rt *Router, next Router) response {
	next.revise()
	*rt = next
	return ok200("router", rt)
}

// addExtraRoutes is the extraroute-atomic PUT …/add_extraroutes: the
// routes are added (those present already are left alone).
func (s *Server) addExtraRoutes(r *http.Request) response {
	return s.changeExtraRoutes(r, func(cur, req []Route) []Route { return dedupRoutes(append(slices.Clone(cur), req...)) })
}

// removeExtraRoutes is PUT …/remove_extraroutes: the routes are removed
// (those absent are ignored).
func (s *Server) removeExtraRoutes(r *http.Request) response {
	return s.changeExtraRoutes(r, func(cur, req []Route) []Route {
		return slices.DeleteFunc(slices.Clone(cur), func(x Route) bool { return slices.Contains(req, x) })
	})
}

func (s *Server) changeExtraRoutes(r *http.Request, apply func(cur, req []Route) []Route) response {
	if !s.extensionEnabled("extraroute-atomic") {
		return neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	rt, ok := s.st.routers.Get(r.PathValue("id"))
	if !ok {
		return neutronNotFound("Router", r.PathValue("id"))
	}
	obj, err := decodeEnvelope(r, "router")
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	var req []Route
	raw, has := obj["routes"]
	if !has || json.Unmarshal(raw, &req) != nil {
		return neutronBadRequest("Invalid input for routes. Reason: a list of routes is required.")
	}
	for i := range req {
		req[i] = normalizeRoute(req[i])
	}
	routes := apply(rt.Routes, req)
	if errResp := s.checkRoutes(rt, routes); errResp != nil {
		return *errResp
	}
	next := rt.clone()
	next.Routes = nonNil(routes)
	return s.commitRouter(rt, next)
}

// normalizeRoute masks the destination, as Neutron stores it.
func normalizeRoute(rt Route) Route {
	if p, err := netip.ParsePrefix(rt.Destination); err == nil {
		rt.Destination = p.Masked().String()
	}
	return rt
}

func dedupRoutes(routes []Route) []Route {
	var out []Route
	for _, rt := range routes {
		rt = normalizeRoute(rt)
		if !slices.Contains(out, rt) {
			out = append(out, rt)
		}
	}
	return out
}

// checkRoutes validates a router's new route list as Neutron does: valid
// CIDR and IP, a next hop on one of the router's subnets but not one of
// its own addresses, at most MaxRoutes routes.
func (s *Server) checkRoutes(rt *Router, routes []Route) *response {
	if len(routes) > s.opts.MaxRoutes {
		r := neutronBadRequest("Unable to complete operation for %s. The number of routes exceeds the maximum %d.", rt.ID, s.opts.MaxRoutes)
		r.Body = neutronErrorBody("RoutesExhausted", fmt.Sprintf("Unable to complete operation for %s. The number of routes exceeds the maximum %d.", rt.ID, s.opts.MaxRoutes))
		return &r
	}
	var prefixes []netip.Prefix
	own := map[netip.Addr]bool{}
	for _, p := range s.st.ports.All() {
		if p.DeviceID != rt.ID {
			continue
		}
		for _, ip := range p.FixedIPs {
			if sr, ok := s.st.subnets.Get(ip.SubnetID); ok {
				prefixes = append(prefixes, sr.prefix)
			}
			if a, err := netip.ParseAddr(ip.IPAddress); err == nil {
				own[a] = true
			}
		}
	}
	invalid := func(route Route, reason string) *response {
		data, _ := json.Marshal(routes)
		r := neutronError(http.StatusBadRequest, "InvalidRoutes", "Invalid format for routes: %s, %s", data, reason)
		return &r
	}
	for _, route := range routes {
		if _, err := netip.ParsePrefix(route.Destination); err != nil {
			return invalid(route, fmt.Sprintf("'%s' is not a valid IP subnet", route.Destination))
		}
		hop, err := netip.ParseAddr(route.NextHop)
		if err != nil {
			return invalid(route, fmt.Sprintf("'%s' is not a valid IP address", route.NextHop))
		}
		if own[hop] {
			return invalid(route, "the nexthop is used by router")
		}
		if !slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(hop) }) {
			return invalid(route, "the nexthop is not connected with router")
		}
	}
	return nil
}
