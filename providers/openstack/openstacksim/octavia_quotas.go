package openstacksim

import (
	"net/http"
	"strings"
)

// Octavia's quotas (octavia/api/v2/controllers/quotas.py, api-ref "Quotas"),
// as its default policy (octavia/policies/quota.py, base.py) answers them
// to a project member (load-balancer_member): its own project's only.
//
//	GET /lbaas/quotas                      the "non-default" quota records:
//	                                       Octavia keeps one per project from
//	                                       its first create of a load-balancer
//	                                       object (check_quota_met), its limits
//	                                       null while they are the defaults
//	GET /lbaas/quotas/{project_id}         the project's quota, defaults filled in
//	GET /lbaas/quotas/{project_id}/default the deployment's defaults
//
// Each quota has both spellings Octavia answers with (loadbalancer and
// the deprecated load_balancer, healthmonitor and health_monitor); the
// defaults are Octavia's, -1 (unlimited) for every kind. Another
// project's quota, the quota list of another project (project_id=),
// and changing or resetting quotas (PUT, DELETE: quota admins only) are
// 403 "Policy does not allow this request to be performed.". So is GET
// /lbaas/quotas/defaults, which the api-ref lists as the defaults: Octavia
// routes it as the quota of a project called "defaults" (its defaults
// live at /quotas/{project_id}/default).

// octaviaQuotaDefault is Octavia's default quota for every kind
// (QUOTA_UNLIMITED, octavia/common/config.py quota_opts).
const octaviaQuotaDefault = -1

var octaviaQuotaKinds = []string{
	"loadbalancer", "load_balancer", "listener", "member", "pool",
	"healthmonitor", "health_monitor", "l7policy", "l7rule",
}

// octaviaQuota is a quota object: every kind set to value (nil: null).
func octaviaQuota(projectID string, value any) map[string]any {
	q := map[string]any{"project_id": projectID}
	for _, k := range octaviaQuotaKinds {
		q[k] = value
	}
	return q
}

func octaviaForbidden() response {
	return octaviaError(http.StatusForbidden, "Policy does not allow this request to be performed.")
}

func (s *Server) listOctaviaQuotas(r *http.Request) response {
	project := s.tokenProject(r)
	if p, given := r.URL.Query()["project_id"]; given && strings.Join(p, "") != project {
		return octaviaForbidden()
	}
	items := []map[string]any{}
	if s.st.octaviaQuotaRows[project] {
		q := octaviaQuota(project, nil)
		q["id"] = project // the marker of Octavia's quota pages
		items = append(items, q)
	}
	p, errResp := s.octaviaPage(r, items, items)
	if errResp != nil {
		return *errResp
	}
	for _, q := range p.items {
		delete(q, "id")
	}
	return jsonOK(octaviaListBody("quotas", p))
}

func (s *Server) getOctaviaQuota(r *http.Request) response {
	if r.PathValue("project_id") != s.tokenProject(r) {
		return octaviaForbidden()
	}
	return jsonOK(map[string]any{"quota": octaviaQuota(r.PathValue("project_id"), octaviaQuotaDefault)})
}

func (s *Server) getOctaviaQuotaDefaults(r *http.Request) response {
	if r.PathValue("project_id") != s.tokenProject(r) {
		return octaviaForbidden()
	}
	return jsonOK(map[string]any{"quota": octaviaQuota(r.PathValue("project_id"), octaviaQuotaDefault)})
}
