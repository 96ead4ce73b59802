package openstacksim

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

// TestNeutronAvailabilityZones follows neutron-lib's availability_zone,
// network_availability_zone and router_availability_zone definitions
// and the Networking API reference ("Availability Zones"): the
// extensions (and the agent extension availability_zone requires) are
// advertised, GET /v2.0/availability_zones lists {name, resource, state}
// for networks and routers with the name, resource and state filters,
// and networks and routers show availability_zones and
// availability_zone_hints.
func TestNeutronAvailabilityZones(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddNetwork(Network{Name: "zoned", AvailabilityZones: []string{"az-2"}})
	for _, alias := range []string{"agent", "availability_zone", "availability_zone_filter", "network_availability_zone", "router_availability_zone"} {
		if _, err := extensions.Get(ctx(), c.network, alias).Extract(); err != nil {
			t.Errorf("extension %s: %v", alias, err)
		}
	}
	raw := rawClient{t: t, token: c.provider.TokenID}
	zonesURL := s.URL() + networkV2 + "/availability_zones"
	zone := func(name, resource string) map[string]any {
		return map[string]any{"name": name, "resource": resource, "state": "available"}
	}
	for query, want := range map[string][]any{
		"":                             {zone("az-2", "network"), zone("nova", "network"), zone("nova", "router")},
		"?resource=router":             {zone("nova", "router")},
		"?name=az-2&state=available":   {zone("az-2", "network")},
		"?state=unavailable":           {},
		"?resource=network&limit=1":    {zone("az-2", "network"), zone("nova", "network")}, // not paginated
		"?resource=router&fields=name": {map[string]any{"name": "nova"}},
	} {
		status, body := raw.do("GET", zonesURL+query, nil)
		if got, _ := path(body, "availability_zones").([]any); status != http.StatusOK || !cmp.Equal(got, want) {
			t.Errorf("GET availability_zones%s: %d %v, want %v", query, status, body, want)
		}
	}
	if status, body := raw.do("GET", zonesURL+"?colour=red", nil); status != http.StatusBadRequest {
		t.Errorf("unknown filter: %d %v, want 400", status, body)
	}
	if status, body := raw.do("GET", s.URL()+networkV2+"/agents", nil); status != http.StatusOK || len(path(body, "agents").([]any)) != 0 {
		t.Errorf("agents as a member: %d %v, want 200 and none", status, body)
	}

	n, err := networks.Get(ctx(), c.network, s.Defaults().NetworkID).Extract()
	if err != nil || n.AvailabilityZoneHints == nil || len(n.AvailabilityZoneHints) != 0 {
		t.Errorf("network hints %#v (%v)", n.AvailabilityZoneHints, err)
	}
	r, err := routers.Get(ctx(), c.network, s.Defaults().RouterID).Extract()
	if err != nil || r.AvailabilityZoneHints == nil || len(r.AvailabilityZoneHints) != 0 {
		t.Errorf("router hints %#v (%v)", r.AvailabilityZoneHints, err)
	}
	for _, p := range []string{"/networks/" + n.ID, "/routers/" + r.ID} {
		_, body := raw.do("GET", s.URL()+networkV2+p, nil)
		for _, v := range body.(map[string]any) {
			if zones := path(v, "availability_zones"); !cmp.Equal(zones, []any{"nova"}) {
				t.Errorf("GET %s: availability_zones %v", p, zones)
			}
		}
	}
}
