package openstacksim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// User is a Keystone user that can get tokens with password auth.
type User struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	// ID defaults to one derived from Domain and Name.
	ID string `json:"id,omitempty"`
	// Domain is the user's domain name; "" means DefaultDomain.
	Domain string `json:"domain,omitempty"`
	// Project is the project (tenant) the user's tokens are scoped to; ""
	// means DefaultProject.
	Project string `json:"project,omitempty"`
	// ProjectDomain is the project's domain name; "" means Domain.
	ProjectDomain string `json:"projectDomain,omitempty"`
	// ProjectID defaults to one derived from ProjectDomain and Project.
	ProjectID string `json:"projectID,omitempty"`
}

func (u *User) defaults(int) {
	if u.Domain == "" {
		u.Domain = DefaultDomain
	}
	if u.ID == "" {
		u.ID = hexID("user", u.Domain, u.Name)
	}
	if u.Project == "" {
		u.Project = DefaultProject
	}
	if u.ProjectDomain == "" {
		u.ProjectDomain = u.Domain
	}
	if u.ProjectID == "" {
		u.ProjectID = hexID("project", u.ProjectDomain, u.Project)
	}
}

// ApplicationCredential is a Keystone application credential: an ID (or a
// name plus its user) and a secret, scoped to its user's project.
type ApplicationCredential struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Secret string `json:"secret"`
	// User is the name of the owning user in Options.Users; "" means the
	// first one.
	User string `json:"user,omitempty"`
}

func (a *ApplicationCredential) defaults(i int) {
	if a.ID == "" {
		a.ID = hexID("application_credential", a.User, a.Name, strconv.Itoa(i))
	}
}

// token is an issued token.
type token struct {
	id      string
	user    *User
	appCred *ApplicationCredential
	methods []string
	issued  time.Time
	expires time.Time
}

func (t *token) valid(now time.Time) bool { return now.Before(t.expires) }

const msgUnauthenticated = "The request you have made requires authentication."

func (s *Server) keystoneRoutes() {
	for _, p := range []string{identityPrefix, identityPrefix + "/{$}"} {
		s.Handle("GET "+p, s.identityVersions, simkit.NoAuth)
	}
	for _, p := range []string{identityPrefix + "/v3", identityPrefix + "/v3/{$}"} {
		s.Handle("GET "+p, s.identityVersion, simkit.NoAuth)
	}
	s.Handle("POST "+identityPrefix+"/v3/auth/tokens", s.issueToken, simkit.NoAuth, simkit.NoWrite)
	s.Handle("GET "+identityPrefix+"/v3/auth/tokens", s.validateToken, simkit.NoWrite)
	s.Handle("DELETE "+identityPrefix+"/v3/auth/tokens", s.revokeToken, simkit.NoWrite)
	s.keystonePolicyRoutes()
}

func (s *Server) identityV3Doc(r *http.Request) map[string]any {
	return map[string]any{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []link{{Rel: "self", Href: simkit.BaseURL(r) + identityPrefix + "/v3/"}},
		"media-types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

// identityVersions is Keystone's root: 300 Multiple Choices, as the real
// service answers.
func (s *Server) identityVersions(r *http.Request) response {
	return simkit.JSON(http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{s.identityV3Doc(r)}}})
}

func (s *Server) identityVersion(r *http.Request) response {
	return jsonOK(map[string]any{"version": s.identityV3Doc(r)})
}

// authenticate is the X-Auth-Token check of every API endpoint but
// Keystone's own token issuing and the version documents.
func (s *Server) authenticate(r *http.Request) *response {
	if s.opts.NoAuth {
		return nil
	}
	s.mu.Lock()
	t := s.tokens[r.Header.Get("X-Auth-Token")]
	valid := t != nil && t.valid(time.Now())
	s.mu.Unlock()
	if valid {
		return nil
	}
	resp := simkit.JSON(http.StatusUnauthorized, keystoneErrorBody(http.StatusUnauthorized, msgUnauthenticated))
	resp.Header = http.Header{"Www-Authenticate": {`Keystone uri="` + simkit.BaseURL(r) + identityPrefix + `"`}}
	return &resp
}

// ExpireTokens makes every token issued so far invalid: the next request
// with one gets 401, and a client that can re-authenticate (gophercloud's
// AllowReauth) gets a new token and retries.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	past := time.Now().Add(-time.Second)
	for _, t := range s.tokens {
		t.expires = past
	}
}

// SetPassword changes the password of the user called name (in
// Options.Users) and revokes every token issued to that user, as Keystone
// does when a password changes: the next request with one gets 401, and
// only the new password gets another. It reports whether there is such a
// user.
func (s *Server) SetPassword(name, password string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.opts.Users {
		if u := &s.opts.Users[i]; u.Name == name {
			u.Password = password
			s.revokeLocked(func(t *token) bool { return t.user.ID == u.ID })
			return true
		}
	}
	return false
}

// DeleteApplicationCredential deletes the application credential with ID
// id and revokes the tokens issued for it, as Keystone does: rotating an
// application credential is creating a new one (in Options) and deleting
// the old. It reports whether there was such a credential.
func (s *Server) DeleteApplicationCredential(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.opts.ApplicationCredentials, func(a ApplicationCredential) bool { return a.ID == id })
	if i < 0 {
		return false
	}
	// A new slice: issued tokens point into the old one.
	s.opts.ApplicationCredentials = slices.Concat(s.opts.ApplicationCredentials[:i], s.opts.ApplicationCredentials[i+1:])
	s.revokeLocked(func(t *token) bool { return t.appCred != nil && t.appCred.ID == id })
	return true
}

// revokeLocked expires the tokens revoke picks; s.mu is held.
func (s *Server) revokeLocked(revoke func(*token) bool) {
	past := time.Now().Add(-time.Second)
	for _, t := range s.tokens {
		if revoke(t) && t.expires.After(past) {
			t.expires = past
		}
	}
}

// TokensIssued returns how many tokens Keystone has issued.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

func newTokenID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "gAAAAA" + hex.EncodeToString(b)
}

func (s *Server) issueToken(r *http.Request) response {
	var req authRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badBody("POST "+identityPrefix, err)
	}
	t, errResp := s.login(req)
	if errResp != nil {
		return *errResp
	}
	now := time.Now().UTC()
	t.id, t.issued, t.expires = newTokenID(), now, now.Add(s.opts.TokenTTL)
	s.tokens[t.id] = t
	resp := created(s.tokenBody(r, t))
	resp.Header = http.Header{"X-Subject-Token": {t.id}}
	return resp
}

func (s *Server) validateToken(r *http.Request) response {
	t := s.tokens[r.Header.Get("X-Subject-Token")]
	if t == nil || !t.valid(time.Now()) {
		return simkit.JSON(http.StatusNotFound, keystoneErrorBody(http.StatusNotFound, "Could not find token: "+r.Header.Get("X-Subject-Token")+"."))
	}
	resp := jsonOK(s.tokenBody(r, t))
	resp.Header = http.Header{"X-Subject-Token": {t.id}}
	return resp
}

func (s *Server) revokeToken(r *http.Request) response {
	t := s.tokens[r.Header.Get("X-Subject-Token")]
	if t == nil || !t.valid(time.Now()) {
		return simkit.JSON(http.StatusNotFound, keystoneErrorBody(http.StatusNotFound, "Could not find token."))
	}
	t.expires = time.Now().Add(-time.Second)
	return noContent()
}

// tokenBody is the token document with the catalog.
func (s *Server) tokenBody(r *http.Request, t *token) map[string]any {
	u := t.user
	domain := func(name string) map[string]string { return map[string]string{"id": domainID(name), "name": name} }
	body := map[string]any{
		"methods":    t.methods,
		"issued_at":  t.issued.Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": t.expires.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"audit_ids":  []string{hexID("audit", t.id)[:22]},
		"is_domain":  false,
		"user":       map[string]any{"id": u.ID, "name": u.Name, "domain": domain(u.Domain), "password_expires_at": nil},
		"project":    map[string]any{"id": u.ProjectID, "name": u.Project, "domain": domain(u.ProjectDomain)},
		"roles": []map[string]string{
			{"id": hexID("role", "member"), "name": "member"},
			{"id": hexID("role", "reader"), "name": "reader"},
			{"id": hexID("role", "load-balancer_member"), "name": "load-balancer_member"},
		},
		"catalog": s.catalog(r, u.ProjectID),
	}
	if a := t.appCred; a != nil {
		body["application_credential"] = map[string]any{"id": a.ID, "name": a.Name, "restricted": true}
	}
	return map[string]any{"token": body}
}

// domainID is the ID of a domain by name; Keystone's default domain has
// the ID "default".
func domainID(name string) string {
	if name == DefaultDomain {
		return "default"
	}
	return hexID("domain", name)
}

// catalog lists each service with public, internal and admin endpoints in
// the region, all pointing back at this server. Cinder is there twice,
// as DevStack registers it: as block-storage (the service type
// gophercloud's NewBlockStorageV3 and openstacksdk look for) and as
// volumev3 (python-cinderclient's), both at /volume/v3/<project ID>.
func (s *Server) catalog(r *http.Request, project string) []map[string]any {
	base := simkit.BaseURL(r)
	services := []struct{ typ, name, path string }{
		{"identity", "keystone", identityPrefix},
		{"compute", "nova", computeV21},
		{"network", "neutron", networkPrefix},
		{"load-balancer", "octavia", lbPrefix},
		{"image", "glance", imagePrefix},
		{"block-storage", "cinder", volumeV3 + "/" + project},
		{"volumev3", "cinderv3", volumeV3 + "/" + project},
	}
	out := make([]map[string]any, 0, len(services))
	for _, svc := range services {
		var eps []map[string]string
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, map[string]string{
				"id": hexID("endpoint", svc.typ, iface), "interface": iface,
				"region": s.opts.Region, "region_id": s.opts.Region, "url": base + svc.path,
			})
		}
		out = append(out, map[string]any{"id": hexID("service", svc.typ), "type": svc.typ, "name": svc.name, "endpoints": eps})
	}
	return out
}

func secretEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// tokenProject is the ID of the project the request's token is scoped to;
// without a valid token (Options.NoAuth), the first user's. Call it with
// s.mu held.
func (s *Server) tokenProject(r *http.Request) string { return s.tokenUser(r).ProjectID }
