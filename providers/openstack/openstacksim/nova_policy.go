package openstacksim

import (
	"net/http"
	"strings"
)

// novaAdminOnly are Nova endpoints whose default policy needs the admin
// role: a member gets 403 with the rule's name, as from Nova, so clients
// can tell "not allowed" from "not there". until, when not 0, is the
// microversion from which the endpoint is gone (404).
var novaAdminOnly = []struct {
	op, rule string
	until    int
}{
	{"GET /os-hypervisors", "os-hypervisors:list", 0},
	{"GET /os-hypervisors/detail", "os-hypervisors:list-detail", 0},
	{"GET /os-hypervisors/statistics", "os-hypervisors:statistics", 88},
	{"GET /os-hypervisors/{id}", "os-hypervisors:show", 0},
	{"GET /os-hypervisors/{id}/uptime", "os-hypervisors:uptime", 88},
	{"GET /os-hypervisors/{pattern}/search", "os-hypervisors:search", 53},
	{"GET /os-hypervisors/{pattern}/servers", "os-hypervisors:servers", 53},
	{"GET /os-availability-zone/detail", "os-availability-zone:detail", 0},
	{"GET /os-services", "os-services:list", 0},
	{"PUT /os-services/{id}", "os-services:update", 0},
	{"DELETE /os-services/{id}", "os-services:delete", 0},
	{"GET /os-aggregates", "os-aggregates:index", 0},
	{"POST /os-aggregates", "os-aggregates:create", 0},
	{"GET /os-aggregates/{id}", "os-aggregates:show", 0},
	{"PUT /os-aggregates/{id}", "os-aggregates:update", 0},
	{"DELETE /os-aggregates/{id}", "os-aggregates:delete", 0},
	{"GET /os-migrations", "os-migrations:index", 0},
	{"GET /os-simple-tenant-usage", "os-simple-tenant-usage:list", 0},
	{"GET /os-instance_usage_audit_log", "os-instance-usage-audit-log:list", 0},
	{"POST /os-server-external-events", "os-server-external-events:create", 0},
	{"GET /os-hosts", "os-hosts:list", 43},
	{"GET /os-hosts/{host}", "os-hosts:show", 43},
	{"PUT /os-quota-sets/{project}", "os-quota-sets:update", 0},
	{"DELETE /os-quota-sets/{project}", "os-quota-sets:delete", 0},
	{"POST /flavors", "os-flavor-manage:create", 0},
	{"DELETE /flavors/{id}", "os-flavor-manage:delete", 0},
	{"GET /flavors/{id}/os-flavor-access", "os-flavor-access", 0},
	{"POST /flavors/{id}/os-extra_specs", "os-flavor-extra-specs:create", 0},
	{"PUT /flavors/{id}/os-extra_specs/{key}", "os-flavor-extra-specs:update", 0},
	{"DELETE /flavors/{id}/os-extra_specs/{key}", "os-flavor-extra-specs:delete", 0},
}

// novaAdminActions are the server actions only an admin may take, by
// the body's action key.
var novaAdminActions = map[string]string{
	"os-resetState":     "os-admin-actions:reset_state",
	"injectNetworkInfo": "os-admin-actions:inject_network_info",
	"os-migrateLive":    "os-migrate-server:migrate_live",
	"migrate":           "os-migrate-server:migrate",
	"evacuate":          "os-evacuate",
}

func (s *Server) novaPolicyRoutes() {
	for _, e := range novaAdminOnly {
		method, path, _ := strings.Cut(e.op, " ")
		rule, until := "os_compute_api:"+e.rule, e.until
		s.novaHandle(method+" "+computeV21+path, func(_ *http.Request, minor int) response {
			if until > 0 && minor >= until {
				return novaError(http.StatusNotFound, "The resource could not be found.")
			}
			return policyForbidden(rule)
		})
	}
}

// policyForbidden is Nova's answer to a call the caller's roles do not
// allow.
func policyForbidden(rule string) response {
	return novaError(http.StatusForbidden, "Policy doesn't allow %s to be performed.", rule)
}
