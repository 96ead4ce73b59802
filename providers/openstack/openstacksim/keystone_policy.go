package openstacksim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// keystoneAdminOnly are Keystone listings whose default policy needs an
// admin (or a system reader): a project member gets 403 naming the rule.
var keystoneAdminOnly = []struct{ path, rule string }{
	{"/v3/projects", "identity:list_projects"},
	{"/v3/users", "identity:list_users"},
	{"/v3/domains", "identity:list_domains"},
	{"/v3/roles", "identity:list_roles"},
	{"/v3/services", "identity:list_services"},
	{"/v3/endpoints", "identity:list_endpoints"},
	{"/v3/role_assignments", "identity:list_role_assignments"},
}

func (s *Server) keystonePolicyRoutes() {
	for _, e := range keystoneAdminOnly {
		rule := e.rule
		s.Handle("GET "+identityPrefix+e.path, func(*http.Request) response {
			return simkit.JSON(http.StatusForbidden, keystoneErrorBody(http.StatusForbidden,
				"You are not authorized to perform the requested action: "+rule+"."))
		})
	}
	s.Handle("GET "+identityPrefix+"/v3/auth/projects", s.authProjects)
	s.Handle("GET "+identityPrefix+"/v3/users/{id}/projects", s.userProjects)
}

// projectsBody lists the one project a user has a role on.
func (s *Server) projectsBody(r *http.Request, u *User) map[string]any {
	href := simkit.BaseURL(r) + identityPrefix + "/v3/projects/" + u.ProjectID
	return map[string]any{
		"projects": []map[string]any{{
			"id": u.ProjectID, "name": u.Project, "domain_id": domainID(u.ProjectDomain), "description": "",
			"enabled": true, "is_domain": false, "parent_id": domainID(u.ProjectDomain), "tags": []string{}, "options": map[string]any{},
			"links": map[string]string{"self": href},
		}},
		"links": map[string]any{"self": simkit.BaseURL(r) + r.URL.Path, "previous": nil, "next": nil},
	}
}

// authProjects is GET /v3/auth/projects: the projects the token's user
// may scope to.
func (s *Server) authProjects(r *http.Request) response {
	return jsonOK(s.projectsBody(r, s.tokenUser(r)))
}

// userProjects is GET /v3/users/{id}/projects, which a user may ask
// about itself only.
func (s *Server) userProjects(r *http.Request) response {
	u := s.tokenUser(r)
	if r.PathValue("id") != u.ID {
		return simkit.JSON(http.StatusForbidden, keystoneErrorBody(http.StatusForbidden,
			"You are not authorized to perform the requested action: identity:list_user_projects."))
	}
	return jsonOK(s.projectsBody(r, u))
}

// tokenUser is the request's token's user; without a valid token
// (Options.NoAuth), the first user. Call it with s.mu held.
func (s *Server) tokenUser(r *http.Request) *User {
	if t := s.tokens[r.Header.Get("X-Auth-Token")]; t != nil {
		return t.user
	}
	return &s.opts.Users[0]
}
