package openstacksim

import "net/http"

// novaQuotas are Nova's default quotas, as os-quota-sets shows them; the
// network ones went at 2.36, the injected-file ones at 2.57.
var novaQuotas = []struct {
	name  string
	limit int
	until int
}{
	{"cores", 20, 0}, {"instances", 10, 0}, {"key_pairs", 100, 0}, {"metadata_items", 128, 0},
	{"ram", 51200, 0}, {"server_groups", 10, 0}, {"server_group_members", 10, 0},
	{"injected_files", 5, 57}, {"injected_file_content_bytes", 10240, 57}, {"injected_file_path_bytes", 255, 57},
	{"fixed_ips", -1, 36}, {"floating_ips", 10, 36}, {"security_groups", 10, 36}, {"security_group_rules", 20, 36},
}

func (s *Server) novaQuotaRoutes() {
	c := computeV21
	s.novaHandle("GET "+c+"/os-quota-sets/{project}", s.quotaSet(false))
	s.novaHandle("GET "+c+"/os-quota-sets/{project}/detail", s.quotaSet(true))
	s.novaHandle("GET "+c+"/limits", s.limits)
	// The project has no key pairs and no server groups.
	s.novaHandle("GET "+c+"/os-keypairs", func(*http.Request, int) response { return jsonOK(map[string]any{"keypairs": []any{}}) })
	s.novaHandle("GET "+c+"/os-server-groups", func(*http.Request, int) response {
		return jsonOK(map[string]any{"server_groups": []any{}})
	})
	s.novaHandle("GET "+c+"/os-quota-sets/{project}/defaults", func(r *http.Request, minor int) response {
		return jsonOK(map[string]any{"quota_set": quotaSetBody(r.PathValue("project"), minor, nil)})
	})
}

// quotaSet shows a project's quotas (with detail, their usage by the
// project's servers); a member may see only its own project's.
func (s *Server) quotaSet(detail bool) novaHandlerFunc {
	return func(r *http.Request, minor int) response {
		project := r.PathValue("project")
		if project != s.tokenProject(r) {
			rule := "os_compute_api:os-quota-sets:show"
			if detail {
				rule = "os_compute_api:os-quota-sets:detail"
			}
			return policyForbidden(rule)
		}
		var used map[string]int
		if detail {
			used = map[string]int{}
			for _, v := range s.st.servers.All() {
				if v.project != project {
					continue
				}
				used["instances"]++
				if fl, ok := s.st.flavors.Get(v.flavorID); ok {
					used["cores"] += fl.VCPUs
					used["ram"] += fl.RAM
				}
			}
		}
		return jsonOK(map[string]any{"quota_set": quotaSetBody(project, minor, used)})
	}
}

// quotaSetBody is the quota set of project at 2.minor: limits, or with
// used (detail) {"in_use", "limit", "reserved"} for each.
func quotaSetBody(project string, minor int, used map[string]int) map[string]any {
	out := map[string]any{"id": project}
	for _, q := range novaQuotas {
		if q.until > 0 && minor >= q.until {
			continue
		}
		if used == nil {
			out[q.name] = q.limit
		} else {
			out[q.name] = map[string]int{"in_use": used[q.name], "limit": q.limit, "reserved": 0}
		}
	}
	return out
}

// novaLimits are GET /limits' absolute limits and the quota each comes
// from; the network ones went at 2.36, maxImageMeta at 2.39, the
// personality ones at 2.57.
var novaLimits = []struct {
	name  string
	limit int
	until int
}{
	{"maxTotalCores", 20, 0}, {"maxTotalInstances", 10, 0}, {"maxTotalRAMSize", 51200, 0}, {"maxServerMeta", 128, 0},
	{"maxTotalKeypairs", 100, 0}, {"maxServerGroups", 10, 0}, {"maxServerGroupMembers", 10, 0},
	{"maxImageMeta", 128, 39}, {"maxPersonality", 5, 57}, {"maxPersonalitySize", 10240, 57},
	{"maxSecurityGroups", 10, 36}, {"maxSecurityGroupRules", 20, 36}, {"maxTotalFloatingIps", 10, 36},
}

// limits is GET /limits: the project's absolute limits and usage, no
// rate limits.
func (s *Server) limits(r *http.Request, minor int) response {
	project := s.tokenProject(r)
	abs := map[string]int{"totalCoresUsed": 0, "totalInstancesUsed": 0, "totalRAMUsed": 0, "totalServerGroupsUsed": 0}
	if minor < 36 {
		abs["totalFloatingIpsUsed"], abs["totalSecurityGroupsUsed"] = 0, 0
	}
	for _, l := range novaLimits {
		if l.until == 0 || minor < l.until {
			abs[l.name] = l.limit
		}
	}
	for _, v := range s.st.servers.All() {
		if v.project != project {
			continue
		}
		abs["totalInstancesUsed"]++
		if fl, ok := s.st.flavors.Get(v.flavorID); ok {
			abs["totalCoresUsed"] += fl.VCPUs
			abs["totalRAMUsed"] += fl.RAM
		}
	}
	return jsonOK(map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}
