package openstacksim

import (
	"net/http"
	"slices"
)

// Availability zones, as Neutron's availability_zone extension serves them
// (neutron-lib api/definitions/availability_zone.py; Networking API
// reference, "Availability Zones"): GET /v2.0/availability_zones lists
// every zone with the kind of resource it hosts, {name, resource: network
// or router, state: available}, filtered on name, resource and state
// (availability_zone_filter) and not paginated (Neutron builds the
// collection without pagination, neutron/extensions/availability_zone.py).
// Neutron derives the zones from its DHCP agents (network) and L3 agents
// (router) (neutron/db/agents_db.py); the simulated cloud has both in
// zone "nova" and in every zone one of its networks or routers is in.
// Networks (network_availability_zone) and routers
// (router_availability_zone) show their availability_zones and the
// availability_zone_hints they were created with (none).
//
// The availability_zone extension requires the agent extension: GET
// /v2.0/agents is Neutron's policy-filtered list, empty for a project
// member (get_agent is admin-only, neutron/conf/policies/agent.py), and
// GET /v2.0/agents/{id} is 404.

func (s *Server) availabilityZoneRoutes() {
	n := networkV2
	s.Handle("GET "+n+"/availability_zones", s.listNetworkAZs)
	s.Handle("GET "+n+"/agents", func(r *http.Request) response {
		return s.neutronList(r, "agents", "Agent", []map[string]any{})
	})
	s.Handle("GET "+n+"/agents/{id}", func(r *http.Request) response {
		return neutronError(http.StatusNotFound, "AgentNotFound", "Agent %s could not be found.", r.PathValue("id"))
	})
}

// networkAZs are the zones of network and router resources: "nova", and
// the zones the networks and routers are in, each sorted.
func (s *Server) networkAZs() map[string][]string {
	zones := map[string][]string{"network": {"nova"}, "router": {"nova"}}
	add := func(resource string, azs []string) {
		for _, z := range azs {
			if !slices.Contains(zones[resource], z) {
				zones[resource] = append(zones[resource], z)
			}
		}
	}
	for _, n := range s.st.networks.All() {
		add("network", n.AvailabilityZones)
	}
	for _, rt := range s.st.routers.All() {
		add("router", rt.AvailabilityZones)
	}
	return zones
}

func (s *Server) listNetworkAZs(r *http.Request) response {
	zones := s.networkAZs()
	items := []map[string]any{}
	for _, resource := range []string{"network", "router"} {
		slices.Sort(zones[resource])
		for _, z := range zones[resource] {
			items = append(items, map[string]any{"name": z, "resource": resource, "state": "available"})
		}
	}
	q := r.URL.Query()
	items, err := filter(q, items, true)
	if err != nil {
		return neutronBadRequest("%v", err)
	}
	if items == nil {
		items = []map[string]any{}
	}
	return jsonOK(map[string]any{"availability_zones": project(q, items)})
}
