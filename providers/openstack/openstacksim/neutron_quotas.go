package openstacksim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// neutronQuotas are Neutron's default quotas by resource.
var neutronQuotas = []struct {
	resource string
	limit    int
}{
	{"floatingip", 50}, {"network", 100}, {"port", 500}, {"rbac_policy", 10}, {"router", 10},
	{"security_group", 10}, {"security_group_rule", 100}, {"subnet", 100}, {"subnetpool", -1},
}

func (s *Server) neutronQuotaRoutes() {
	n := networkV2
	s.Handle("GET "+n+"/quotas", func(*http.Request) response {
		return neutronError(http.StatusForbidden, "AdminRequired", "User does not have admin privileges: Only admin can view or configure quota.")
	})
	s.Handle("GET "+n+"/quotas/{project}", s.projectQuotas(false))
	// Neutron takes a ".json" format suffix; clients such as gophercloud
	// send one here.
	for _, p := range []string{"/details", "/details.json"} {
		s.Handle("GET "+n+"/quotas/{project}"+p, s.projectQuotas(true))
	}
}

// projectQuotas shows the quotas of the token's project (with details,
// what it uses); "tenant" names the caller's project, as Neutron's
// whoami quirk has it. Other projects' quotas are hidden (404).
func (s *Server) projectQuotas(details bool) simkit.HandlerFunc {
	return func(r *http.Request) response {
		project := r.PathValue("project")
		if project == "tenant" && !details {
			return jsonOK(map[string]any{"project": map[string]string{"project_id": s.tokenProject(r)}})
		}
		if project != s.tokenProject(r) {
			return neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
		}
		used := map[string]int{
			"floatingip": s.st.floatingIPs.Len(), "network": s.st.networks.Len(), "port": s.st.ports.Len(),
			"router": s.st.routers.Len(), "security_group": s.st.securityGroups.Len(), "subnet": s.st.subnets.Len(),
		}
		for _, g := range s.st.securityGroups.All() {
			used["security_group_rule"] += len(g.Rules)
		}
		out := map[string]any{"project_id": project, "tenant_id": project}
		for _, q := range neutronQuotas {
			if details {
				out[q.resource] = map[string]int{"used": used[q.resource], "limit": q.limit, "reserved": 0}
			} else {
				out[q.resource] = q.limit
			}
		}
		return jsonOK(map[string]any{"quota": out})
	}
}
