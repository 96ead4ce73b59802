package gbsim

import (
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// ServerGroup is a server group as the simulator holds it. AddServerGroup
// seeds one.
type ServerGroup struct {
	// ID is "grp-xxxxx"; "" gets a new one.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Default marks the account's default group, which new servers join
	// and which cannot be deleted.
	Default bool `json:"default"`
	// Servers are the member servers' IDs.
	Servers   []string  `json:"servers"`
	CreatedAt time.Time `json:"created_at"`
}

func (g *ServerGroup) clone() ServerGroup {
	c := *g
	c.Servers = slices.Clone(g.Servers)
	return c
}

// AddServerGroup creates a server group from g and returns it as stored.
// It panics on a member that is not a server: a test's mistake.
func (s *Server) AddServerGroup(g ServerGroup) ServerGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.ID == "" {
		g.ID = s.st.newID("grp")
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = epoch
	}
	for _, id := range g.Servers {
		if _, ok := s.st.servers.Get(id); !ok {
			panic("gbsim: server group " + g.ID + ": no server " + id)
		}
	}
	stored := g.clone()
	s.st.groups.Put(g.ID, &stored)
	return stored.clone()
}

// ServerGroups returns the server groups, oldest first.
func (s *Server) ServerGroups() []ServerGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.groups.All(), (*ServerGroup).clone)
}

type groupRequest struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

func (req groupRequest) apply(g *ServerGroup) {
	if req.Name != nil {
		g.Name = *req.Name
	}
	if req.Description != nil {
		g.Description = *req.Description
	}
}

// memberList is the body of add_servers, remove_servers and move_servers.
type memberList struct {
	Servers []struct {
		Server string `json:"server"`
	} `json:"servers"`
	Destination string `json:"destination"`
}

func (s *Server) listServerGroups(r *http.Request) simkit.Response {
	return list(s.st.groups, s.view(r).group)
}

func (s *Server) getServerGroup(r *http.Request) simkit.Response {
	return get(r, s.st.groups, s.view(r).group)
}

func (s *Server) createServerGroup(r *http.Request) simkit.Response {
	var req groupRequest
	if resp := decode(r, &req, true); resp != nil {
		return *resp
	}
	g := ServerGroup{ID: s.st.newID("grp"), CreatedAt: s.st.now(), Servers: []string{}}
	req.apply(&g)
	s.st.groups.Put(g.ID, &g)
	return created(s.view(r).group(&g))
}

func (s *Server) updateServerGroup(r *http.Request) simkit.Response {
	g, found := s.st.groups.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req groupRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	req.apply(g)
	return ok(s.view(r).group(g))
}

// deleteServerGroup deletes a group: its servers leave it, a firewall
// policy applied to it is left unapplied, cloud IPs mapped to it are
// unmapped. The default group cannot be deleted.
func (s *Server) deleteServerGroup(r *http.Request) simkit.Response {
	g, found := s.st.groups.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if g.Default {
		return conflict("Server group %s is the default group", g.ID)
	}
	body := s.view(r).group(g)
	if p := s.st.policyOf(g.ID); p != nil {
		p.ServerGroup = ""
	}
	for _, c := range s.st.cips.All() {
		if c.Target == g.ID {
			s.st.unmap(c)
		}
	}
	s.st.groups.Del(g.ID)
	return accepted(body)
}

func (s *Server) addServers(r *http.Request) simkit.Response {
	return s.changeMembers(r, func(g *ServerGroup, id string) *simkit.Response {
		if srv, ok := s.st.servers.Get(id); !ok || srv.Status == StatusDeleted {
			resp := invalid("servers: no server %s", id)
			return &resp
		}
		if slices.Contains(g.Servers, id) {
			resp := conflict("Server %s is already in %s", id, g.ID)
			return &resp
		}
		g.Servers = append(g.Servers, id)
		return nil
	})
}

func (s *Server) removeServers(r *http.Request) simkit.Response {
	return s.changeMembers(r, func(g *ServerGroup, id string) *simkit.Response {
		if !slices.Contains(g.Servers, id) {
			resp := conflict("Server %s is not in %s", id, g.ID)
			return &resp
		}
		g.Servers = slices.DeleteFunc(g.Servers, func(x string) bool { return x == id })
		return nil
	})
}

// moveServers moves servers from the group to the destination group and
// answers with the destination.
func (s *Server) moveServers(r *http.Request) simkit.Response {
	from, found := s.st.groups.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req memberList
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	to, found := s.st.groups.Get(req.Destination)
	if !found {
		return invalid("destination: no server group %q", req.Destination)
	}
	if len(req.Servers) == 0 {
		return invalid("servers: at least one is required")
	}
	nextFrom, nextTo := from.clone(), to.clone()
	for _, m := range req.Servers {
		if !slices.Contains(nextFrom.Servers, m.Server) {
			return conflict("Server %s is not in %s", m.Server, from.ID)
		}
		nextFrom.Servers = slices.DeleteFunc(nextFrom.Servers, func(x string) bool { return x == m.Server })
		if !slices.Contains(nextTo.Servers, m.Server) {
			nextTo.Servers = append(nextTo.Servers, m.Server)
		}
	}
	*from, *to = nextFrom, nextTo
	return accepted(s.view(r).group(to))
}

// changeMembers applies change to a copy of the group for each server of
// the request and stores it only when every change succeeds.
func (s *Server) changeMembers(r *http.Request, change func(*ServerGroup, string) *simkit.Response) simkit.Response {
	g, found := s.st.groups.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req memberList
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if len(req.Servers) == 0 {
		return invalid("servers: at least one is required")
	}
	next := g.clone()
	for _, m := range req.Servers {
		if resp := change(&next, m.Server); resp != nil {
			return *resp
		}
	}
	*g = next
	return accepted(s.view(r).group(g))
}
