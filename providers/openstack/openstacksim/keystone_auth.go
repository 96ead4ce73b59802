package openstacksim

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// idName is a Keystone reference by ID or by name (plus domain).
type idName struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Domain *idName `json:"domain"`
}

// matchesDomain reports whether ref names the domain called name.
func (ref *idName) matchesDomain(name string) bool {
	if ref == nil {
		return false
	}
	return ref.ID != "" && ref.ID == domainID(name) || ref.ID == "" && ref.Name == name
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User struct {
					idName
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
			ApplicationCredential *struct {
				ID     string  `json:"id"`
				Name   string  `json:"name"`
				Secret string  `json:"secret"`
				User   *idName `json:"user"`
			} `json:"application_credential"`
			Token *struct {
				ID string `json:"id"`
			} `json:"token"`
		} `json:"identity"`
		// Scope is an object ({"project": …}, {"domain": …},
		// {"system": …}) or the string "unscoped".
		Scope json.RawMessage `json:"scope"`
	} `json:"auth"`
}

// login checks the credentials of a token request and returns the token
// to issue (without ID and times), or the 401/400 answer.
func (s *Server) login(req authRequest) (*token, *response) {
	id := req.Auth.Identity
	unauthorized := simkit.JSON(http.StatusUnauthorized, keystoneErrorBody(http.StatusUnauthorized, msgUnauthenticated))
	if len(id.Methods) == 0 {
		resp := simkit.JSON(http.StatusBadRequest, keystoneErrorBody(http.StatusBadRequest, "Expecting to find identity.methods in request body."))
		return nil, &resp
	}
	t := &token{methods: id.Methods}
	switch {
	case slices.Contains(id.Methods, "password") && id.Password != nil:
		pu := id.Password.User
		for i := range s.opts.Users {
			u := &s.opts.Users[i]
			byID := pu.ID != "" && pu.ID == u.ID
			byName := pu.ID == "" && pu.Name == u.Name && pu.Domain.matchesDomain(u.Domain)
			if (byID || byName) && secretEqual(pu.Password, u.Password) {
				t.user = u
				break
			}
		}
	case slices.Contains(id.Methods, "application_credential") && id.ApplicationCredential != nil:
		ac := id.ApplicationCredential
		for i := range s.opts.ApplicationCredentials {
			a := &s.opts.ApplicationCredentials[i]
			owner := s.appCredUser(a)
			byID := ac.ID != "" && ac.ID == a.ID
			byName := ac.ID == "" && ac.Name != "" && ac.Name == a.Name && ac.User != nil && owner != nil &&
				(ac.User.ID == owner.ID || ac.User.ID == "" && ac.User.Name == owner.Name && ac.User.Domain.matchesDomain(owner.Domain))
			if (byID || byName) && owner != nil && secretEqual(ac.Secret, a.Secret) {
				t.user, t.appCred = owner, a
				break
			}
		}
		if t.appCred != nil && hasScope(req.Auth.Scope) {
			// Application credentials carry their own scope.
			return nil, &unauthorized
		}
	case slices.Contains(id.Methods, "token") && id.Token != nil:
		if old := s.tokens[id.Token.ID]; old != nil && old.valid(time.Now()) {
			t.user, t.appCred = old.user, old.appCred
		}
	}
	if t.user == nil || !s.scopeAllowed(t.user, req.Auth.Scope) {
		return nil, &unauthorized
	}
	return t, nil
}

// appCredUser is the owner of a, nil if Options.Users has none by its
// name.
func (s *Server) appCredUser(a *ApplicationCredential) *User {
	for i := range s.opts.Users {
		if a.User == "" || s.opts.Users[i].Name == a.User {
			return &s.opts.Users[i]
		}
	}
	return nil
}

func hasScope(raw json.RawMessage) bool {
	var str string
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &str) == nil {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) > 0
}

// scopeAllowed reports whether u may get a token with scope: none (the
// user's default project), "unscoped", its project by ID or by name and
// domain, or its domain.
func (s *Server) scopeAllowed(u *User, raw json.RawMessage) bool {
	if !hasScope(raw) {
		return true
	}
	var sc struct {
		Project *idName         `json:"project"`
		Domain  *idName         `json:"domain"`
		System  json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		return false
	}
	switch {
	case sc.Project != nil:
		p := sc.Project
		return p.ID != "" && p.ID == u.ProjectID || p.ID == "" && p.Name == u.Project && p.Domain.matchesDomain(u.ProjectDomain)
	case sc.Domain != nil:
		return sc.Domain.matchesDomain(u.Domain)
	}
	return false
}
