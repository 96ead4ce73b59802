package skeletonsim

import (
	"net/http"
	"net/netip"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// routeSpec is the body of POST /v1/routes.
type routeSpec struct {
	DestinationCIDR  string   `json:"destination_cidr"`
	TargetInstanceID string   `json:"target_instance_id"`
	Tags             []string `json:"tags"`
}

// AddRoute stores rt as is (no validation), for seeding a scenario, and
// returns it as stored: an empty ID gets the next "r-NNNNNN".
func (s *Server) AddRoute(rt Route) Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt.ID == "" {
		rt.ID = s.st.newID("r")
	}
	rt.Tags = nonNil(rt.Tags)
	stored := rt.clone()
	s.st.routes[rt.ID] = &stored
	return rt
}

// Routes returns every route, sorted by ID.
func (s *Server) Routes() []Route {
	return s.State().Routes
}

func (s *Server) listRoutes(r *http.Request) (int, any) {
	tag := r.URL.Query().Get("tag")
	var all []Route
	for _, rt := range sortedValues(s.st.routes) {
		if tag == "" || slices.Contains(rt.Tags, tag) {
			all = append(all, rt.clone())
		}
	}
	page, meta, err := paginate(r, all, s.opts.PerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	return http.StatusOK, map[string]any{"routes": nonNil(page), "meta": meta}
}

// createRoute adds a route. The destination must be a CIDR no other route
// uses and the target an existing instance.
func (s *Server) createRoute(r *http.Request) (int, any) {
	var spec routeSpec
	if err := simkit.DecodeStrict(r, &spec); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	prefix, err := netip.ParsePrefix(spec.DestinationCIDR)
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "destination_cidr: %v", err)
	}
	if prefix.Masked() != prefix {
		return fail(http.StatusUnprocessableEntity, "destination_cidr %s has host bits set (want %s)", prefix, prefix.Masked())
	}
	if _, ok := s.st.instances[spec.TargetInstanceID]; !ok {
		return fail(http.StatusUnprocessableEntity, "unknown target instance %q", spec.TargetInstanceID)
	}
	for _, rt := range s.st.routes {
		if rt.DestinationCIDR == prefix.String() {
			return fail(http.StatusConflict, "route %s already sends %s to %s", rt.ID, rt.DestinationCIDR, rt.TargetInstanceID)
		}
	}
	rt := &Route{
		ID:               s.st.newID("r"),
		DestinationCIDR:  prefix.String(),
		TargetInstanceID: spec.TargetInstanceID,
		Tags:             nonNil(spec.Tags),
	}
	s.st.routes[rt.ID] = rt
	return http.StatusCreated, map[string]any{"route": rt.clone()}
}

func (s *Server) deleteRoute(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.routes[id]; !ok {
		return fail(http.StatusNotFound, "route %q not found", id)
	}
	delete(s.st.routes, id)
	return http.StatusNoContent, nil
}
