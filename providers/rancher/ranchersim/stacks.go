package ranchersim

import (
	"net/http"
	"regexp"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Stack is a Cattle stack: a named group of services.
type Stack struct {
	// ID is "1st<n>".
	ID          string `json:"id"`
	Name        string `json:"name"`
	ExternalID  string `json:"externalId,omitempty"`
	Description string `json:"description,omitempty"`
	Group       string `json:"group,omitempty"`
	// State is activating, active, removing or removed.
	State   string     `json:"state"`
	Created time.Time  `json:"created"`
	Removed *time.Time `json:"removed,omitempty"`
}

func (k *Stack) clone() Stack {
	c := *k
	c.Removed = clonePtr(k.Removed)
	return c
}

// stackAPI serves the stacks table.
var stackAPI = resources[Stack]{typ: "stack", table: func(st *state) *simkit.Table[Stack] { return st.stacks },
	id: func(k *Stack) string { return k.ID }, doc: func(v view, st *state, k *Stack) any { return v.stack(st, k) }}

func (s *Server) stackRoutes() {
	s.handle("GET "+projectPath+"/stacks", stackAPI.list(s))
	s.handle("POST "+projectPath+"/stacks", s.createStack)
	s.handle("GET "+projectPath+"/stacks/{id}", stackAPI.get(s))
	s.handle("PUT "+projectPath+"/stacks/{id}", s.updateStack)
	s.handle("DELETE "+projectPath+"/stacks/{id}", s.removeStack)
	s.handle("POST "+projectPath+"/stacks/{id}", s.removeStack)
}

// stackActions are the actions a stack offers in state.
func stackActions(state string) []string {
	switch state {
	case StateActive, StateActivating:
		return []string{"remove", "update"}
	}
	return nil
}

// removal answers the DELETE of a stack or a certificate (typ) in state,
// and its POST ?action= (one of stackActions): DELETE and the action
// remove remove it (once: one being removed, or removed, stays so), the
// action update changes nothing (a PUT does). Each answers 202 with doc.
func removal(r *http.Request, typ, state string, removed bool, remove func(), doc func() any) simkit.Response {
	if r.Method == http.MethodPost {
		action := r.URL.Query().Get("action")
		if resp, bad := checkAction(mustSchema(typ), stackActions(state), action); bad {
			return resp
		}
		if action != "remove" {
			return accepted(doc())
		}
	}
	if !removed && state != StateRemoving {
		remove()
	}
	return accepted(doc())
}

// stackDoc is a stack as the API answers it (go-rancher's Stack).
type stackDoc struct {
	resource
	Name                 string   `json:"name"`
	Kind                 string   `json:"kind"`
	State                string   `json:"state"`
	HealthState          string   `json:"healthState"`
	ExternalID           *string  `json:"externalId"`
	Description          *string  `json:"description"`
	Group                *string  `json:"group"`
	ServiceIDs           []string `json:"serviceIds"`
	System               bool     `json:"system"`
	UUID                 string   `json:"uuid"`
	AccountID            string   `json:"accountId"`
	Created              string   `json:"created"`
	CreatedTS            int64    `json:"createdTS"`
	Removed              *string  `json:"removed"`
	Transitioning        string   `json:"transitioning"`
	TransitioningMessage *string  `json:"transitioningMessage"`
}

func (v view) stack(st *state, k *Stack) stackDoc {
	self := v.self("stacks", k.ID)
	d := stackDoc{
		resource: resource{ID: k.ID, Type: "stack", BaseType: "stack", Actions: actions(self, stackActions(k.State)...),
			Links: map[string]string{"self": self, "services": self + "/services"}},
		Name: k.Name, Kind: "stack", State: k.State, HealthState: HealthHealthy,
		ExternalID: nullable(k.ExternalID), Description: nullable(k.Description), Group: nullable(k.Group),
		ServiceIDs: []string{}, UUID: uuidFor(k.ID), AccountID: st.opts.Project,
		Created: k.Created.Format(time.RFC3339), CreatedTS: k.Created.UnixMilli(),
		Removed: timestamp(k.Removed), Transitioning: transitioning(k.State),
		TransitioningMessage: transitioningMessage(k.State),
	}
	for _, svc := range st.services.All() {
		if svc.StackID == k.ID && svc.Removed == nil {
			d.ServiceIDs = append(d.ServiceIDs, svc.ID)
		}
	}
	return d
}

// stackInput is what a POST or PUT of a stack may set.
type stackInput struct {
	Name        *string `json:"name"`
	ExternalID  *string `json:"externalId"`
	Description *string `json:"description"`
	Group       *string `json:"group"`
}

// nameChars are the characters of a stack's or service's name.
var nameChars = regexp.MustCompile(`^[a-zA-Z0-9-]*$`)

// checkName vets a stack's or service's name as the schema's criteria
// do.
func checkName(name string) (simkit.Response, bool) {
	switch {
	case name == "":
		return invalid(codeMissingRequired, "name"), true
	case len(name) > 63:
		return invalid(codeMaxLength, "name"), true
	case !nameChars.MatchString(name):
		return invalid(codeInvalidCharacters, "name"), true
	}
	return simkit.Response{}, false
}

// liveStack returns the stack named name that is not removed, other
// than except.
func (st *state) liveStack(name, except string) *Stack {
	k, _ := st.stacks.Find(func(k *Stack) bool { return k.Name == name && k.Removed == nil && k.ID != except })
	return k
}

// createStack answers POST stacks: 201 with the stack activating; a name
// in use by another stack is 422 NotUnique.
func (s *Server) createStack(r *http.Request) simkit.Response {
	var in stackInput
	if resp := decode(r, &in); resp != nil {
		return *resp
	}
	name := deref(in.Name)
	if resp, bad := checkName(name); bad {
		return resp
	}
	if len(deref(in.ExternalID)) > 128 {
		return invalid(codeMaxLength, "externalId")
	}
	if s.st.liveStack(name, "") != nil {
		return invalid(codeNotUnique, "name")
	}
	k := s.st.addStack(Stack{Name: name, ExternalID: deref(in.ExternalID), Description: deref(in.Description),
		Group: deref(in.Group), State: StateActivating})
	s.st.life.Start(k.ID, func() { k.State = StateActive })
	return created(s.view(r).stack(s.st, k))
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// updateStack answers PUT: name, externalId, description and group.
func (s *Server) updateStack(r *http.Request) simkit.Response {
	k, found := s.st.stacks.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var in stackInput
	if resp := decode(r, &in); resp != nil {
		return *resp
	}
	if in.Name != nil {
		if resp, bad := checkName(*in.Name); bad {
			return resp
		}
		if s.st.liveStack(*in.Name, k.ID) != nil {
			return invalid(codeNotUnique, "name")
		}
		k.Name = *in.Name
	}
	if in.ExternalID != nil {
		k.ExternalID = *in.ExternalID
	}
	if in.Description != nil {
		k.Description = *in.Description
	}
	if in.Group != nil {
		k.Group = *in.Group
	}
	return ok(s.view(r).stack(s.st, k))
}

// removeStack answers DELETE and POST ?action= (remove or update): the
// stack's removal, and its services'.
func (s *Server) removeStack(r *http.Request) simkit.Response {
	k, found := s.st.stacks.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return removal(r, "stack", k.State, k.Removed != nil, func() { s.st.removeStack(k) },
		func() any { return s.view(r).stack(s.st, k) })
}

// removeStack removes a stack: removing, then removed; its services are
// removed with it.
func (st *state) removeStack(k *Stack) {
	for _, svc := range st.services.All() {
		if svc.StackID == k.ID && svc.Removed == nil && svc.State != StateRemoving {
			st.removeService(svc)
		}
	}
	st.retire(k.ID, &k.State, &k.Removed, nil)
}

// AddStack adds a stack in its State (default active) as if created
// earlier: ID "1st<n>" unless given, Created now. It panics on a taken
// ID, as a test's mistake.
func (s *Server) AddStack(k Stack) Stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k.State == "" {
		k.State = StateActive
	}
	return s.st.addStack(k).clone()
}

func (st *state) addStack(k Stack) *Stack {
	st.admit(prefixStack, &k.ID, &k.Created)
	st.stacks.Put(k.ID, &k)
	return &k
}

// RemoveStack removes a stack, as a user deleting it in the UI would: it
// and its services are removing, then removed (hidden by removed_null,
// and a new reference to it is InvalidReference). It reports whether the
// stack exists.
func (s *Server) RemoveStack(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, found := s.st.stacks.Get(id)
	if found && k.Removed == nil && k.State != StateRemoving {
		s.st.removeStack(k)
	}
	return found
}

// Stack returns a copy of the stack with the ID.
func (s *Server) Stack(id string) (Stack, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.stacks, id, (*Stack).clone)
}

// StackByName returns a copy of the stack (not removed) called name.
func (s *Server) StackByName(name string) (Stack, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.st.liveStack(name, ""); k != nil {
		return k.clone(), true
	}
	return Stack{}, false
}

// Stacks returns copies of the stacks, oldest first, removed ones too.
func (s *Server) Stacks() []Stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.stacks.All(), (*Stack).clone)
}
