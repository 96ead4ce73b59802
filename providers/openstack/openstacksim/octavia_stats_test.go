package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
)

// TestOctaviaStats: GET …/loadbalancers/{id}/stats and
// …/listeners/{id}/stats answer Octavia's statistics object (api-ref "Get
// Load Balancer statistics", "Get Listener statistics"), all 0 with no
// traffic, and 404 for what does not exist.
func TestOctaviaStats(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	lb, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, "10.0.0.5")).Extract()
	if err != nil {
		t.Fatal(err)
	}
	stats, err := loadbalancers.GetStats(ctx(), c.lb, lb.ID).Extract()
	if err != nil || *stats != (loadbalancers.Stats{}) {
		t.Errorf("LB stats = %+v, %v", stats, err)
	}
	lstats, err := listeners.GetStats(ctx(), c.lb, lb.Listeners[0].ID).Extract()
	if err != nil || *lstats != (listeners.Stats{}) {
		t.Errorf("listener stats = %+v, %v", lstats, err)
	}
	raw := rawClient{t: t, token: c.provider.TokenID}
	_, body := raw.do("GET", s.URL()+lbaas+"/loadbalancers/"+lb.ID+"/stats", nil)
	for _, k := range []string{"active_connections", "bytes_in", "bytes_out", "request_errors", "total_connections"} {
		if v, ok := path(body, "stats", k).(float64); !ok || v != 0 {
			t.Errorf("stats.%s = %v in %v", k, path(body, "stats", k), body)
		}
	}
	_, err = loadbalancers.GetStats(ctx(), c.lb, "missing").Extract()
	wantCode(t, err, http.StatusNotFound)
	_, err = listeners.GetStats(ctx(), c.lb, "missing").Extract()
	wantCode(t, err, http.StatusNotFound)
}
