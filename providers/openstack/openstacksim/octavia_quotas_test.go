package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/quotas"
)

// TestOctaviaQuotas follows octavia/api/v2/controllers/quotas.py and the
// default quota policy for a project member: its own quota with Octavia's
// defaults (-1, unlimited) filled in, under both spellings; the quota
// list holding the project's record only once it has created a load
// balancer, its limits null (the defaults); the defaults at
// /quotas/{project_id}/default; another project's quota, /quotas/defaults
// (a project called "defaults" to Octavia) and quota changes 403.
func TestOctaviaQuotas(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	project := s.opts.Users[0].ProjectID
	raw := rawClient{t: t, token: c.provider.TokenID}
	quotasURL := s.URL() + lbaas + "/quotas"

	q, err := quotas.Get(ctx(), c.lb, project).Extract()
	if err != nil || *q != (quotas.Quota{Loadbalancer: -1, Listener: -1, Member: -1, Pool: -1, Healthmonitor: -1, L7Policy: -1, L7Rule: -1}) {
		t.Errorf("own quota = %+v, %v", q, err)
	}
	_, body := raw.do("GET", quotasURL+"/"+project, nil)
	for _, k := range []string{"loadbalancer", "load_balancer", "listener", "member", "pool", "healthmonitor", "health_monitor", "l7policy", "l7rule"} {
		if path(body, "quota", k) != float64(-1) {
			t.Errorf("quota.%s = %v", k, path(body, "quota", k))
		}
	}
	if path(body, "quota", "project_id") != project {
		t.Errorf("quota = %v", body)
	}
	if status, body := raw.do("GET", quotasURL+"/"+project+"/default", nil); status != http.StatusOK || path(body, "quota", "pool") != float64(-1) {
		t.Errorf("defaults: %d %v", status, body)
	}

	// No record before the project's first load balancer.
	if status, body := raw.do("GET", quotasURL, nil); status != http.StatusOK || len(path(body, "quotas").([]any)) != 0 {
		t.Errorf("quota list before any LB: %d %v", status, body)
	}
	if _, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: "a", VipSubnetID: s.Defaults().SubnetID}).Extract(); err != nil {
		t.Fatal(err)
	}
	status, body := raw.do("GET", quotasURL, nil)
	list, _ := path(body, "quotas").([]any)
	if status != http.StatusOK || len(list) != 1 || path(list[0], "project_id") != project {
		t.Fatalf("quota list: %d %v", status, body)
	}
	if v, set := list[0].(map[string]any)["loadbalancer"]; !set || v != nil {
		t.Errorf("listed loadbalancer quota = %v, want null (the default)", v)
	}

	for _, req := range []struct{ method, url string }{
		{"GET", quotasURL + "/0123456789abcdef0123456789abcdef"},
		{"GET", quotasURL + "/defaults"},
		{"GET", quotasURL + "?project_id=0123456789abcdef0123456789abcdef"},
		{"PUT", quotasURL + "/" + project},
		{"DELETE", quotasURL + "/" + project},
	} {
		status, body := raw.do(req.method, req.url, map[string]any{"quota": map[string]any{"loadbalancer": 5}})
		if status != http.StatusForbidden || path(body, "faultstring") != "Policy does not allow this request to be performed." {
			t.Errorf("%s %s: %d %v, want 403", req.method, req.url, status, body)
		}
	}
}
