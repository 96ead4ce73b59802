package ranchersim

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Collections of services, by kind.
const (
	collLB       = "loadbalancerservices"
	collExternal = "externalservices"
	collServices = "services"
)

func collectionOf(kind string) string {
	if kind == KindLoadBalancer {
		return collLB
	}
	return collExternal
}

func (s *Server) serviceRoutes() {
	for _, kind := range []string{KindLoadBalancer, KindExternal} {
		p := projectPath + "/" + collectionOf(kind)
		s.handle("GET "+p, s.listServices(kind))
		s.handle("POST "+p, s.createService(kind))
		s.handle("GET "+p+"/{id}", s.getService(kind))
		s.handle("PUT "+p+"/{id}", s.updateService(kind))
		s.handle("DELETE "+p+"/{id}", s.deleteService(kind))
		s.handle("POST "+p+"/{id}", s.serviceAction(kind))
		s.handle("GET "+p+"/{id}/consumedservices", s.consumed(kind, true))
		s.handle("GET "+p+"/{id}/consumedbyservices", s.consumed(kind, false))
	}
	// The service type is every kind's parent: a service is read,
	// updated (the Rancher CLI's scale), removed and acted on under it as
	// under its own type.
	p := projectPath + "/" + collServices
	s.handle("GET "+p, s.listServices(""))
	s.handle("GET "+p+"/{id}", s.getService(""))
	s.handle("PUT "+p+"/{id}", s.updateService(""))
	s.handle("DELETE "+p+"/{id}", s.deleteService(""))
	s.handle("POST "+p+"/{id}", s.serviceAction(""))
	s.handle("GET "+projectPath+"/stacks/{id}/services", s.stackServices)
}

// serviceProcesses are the states each service action's process starts
// from: Cattle v0.183's spring-process-context.xml (service.activate,
// service.deactivate, service.remove, service.update, service.upgrade,
// service.continueupgrade, service.cancelupgrade, service.rollback,
// service.finishupgrade, service.restart). A resource offers an action
// whose process can start from its state (AbstractObjectResourceManager.
// addActions); the service-link actions are no process, and a load
// balancer offers them in every state.
var serviceProcesses = []struct {
	action string
	from   []string
}{
	{"activate", []string{StateInactive, StateRestarting}},
	{"deactivate", []string{StateRestarting, StateActive, StateActivating, StateUpdatingInactive, StateUpdatingActive}},
	{"remove", []string{StateInactive, StateRegistering, StateActive, StateActivating, StateUpdatingInactive,
		StateUpdatingActive, StateUpgrading, StateCancelingUpgrade, StateRollingBack, StateDeactivating,
		StateCanceledUpgrade, StateUpgraded, StateFinishingUpgrade, StateRestarting}},
	{"update", []string{StateInactive, StateActive, StateUpdatingActive, StateFinishingUpgrade, StateActivating,
		StateCancelingUpgrade, StateUpgrading, StateRollingBack}},
	{"restart", []string{StateActive}},
	{"upgrade", []string{StateActive, StateActivating, StateInactive, StateUpdatingActive}},
	{"cancelupgrade", []string{StateUpgrading, StateFinishingUpgrade}},
	{"continueupgrade", []string{StateCanceledUpgrade}},
	{"finishupgrade", []string{StateUpgraded}},
	{"rollback", []string{StateUpgrading, StateUpgraded, StateCanceledUpgrade}},
}

// serviceActionsIn are the actions a service of kind offers in state.
func serviceActionsIn(kind, state string) []string {
	var out []string
	for _, p := range serviceProcesses {
		if slices.Contains(p.from, state) {
			out = append(out, p.action)
		}
	}
	if kind == KindLoadBalancer {
		out = append(out, "setservicelinks", "addservicelink", "removeservicelink")
	}
	return out
}

// serviceDoc is a service as the API answers it (go-rancher's
// LoadBalancerService, ExternalService and Service).
type serviceDoc struct {
	resource
	Name                 string          `json:"name"`
	Kind                 string          `json:"kind"`
	State                string          `json:"state"`
	HealthState          string          `json:"healthState"`
	StackID              string          `json:"stackId"`
	ExternalID           *string         `json:"externalId"`
	Description          *string         `json:"description"`
	UUID                 string          `json:"uuid"`
	AccountID            string          `json:"accountId"`
	LaunchConfig         *LaunchConfig   `json:"launchConfig"`
	Metadata             map[string]any  `json:"metadata"`
	Upgrade              *ServiceUpgrade `json:"upgrade"`
	StartOnCreate        bool            `json:"startOnCreate"`
	System               bool            `json:"system"`
	Fqdn                 *string         `json:"fqdn"`
	Created              string          `json:"created"`
	CreatedTS            int64           `json:"createdTS"`
	Removed              *string         `json:"removed"`
	Transitioning        string          `json:"transitioning"`
	TransitioningMessage *string         `json:"transitioningMessage"`
	// Load balancers.
	LBConfig        *LBConfig     `json:"lbConfig,omitempty"`
	Scale           *int          `json:"scale,omitempty"`
	CurrentScale    *int          `json:"currentScale,omitempty"`
	PublicEndpoints []endpointDoc `json:"publicEndpoints,omitempty"`
	InstanceIDs     []string      `json:"instanceIds,omitempty"`
	// External services.
	ExternalIPAddresses []string     `json:"externalIpAddresses,omitempty"`
	Hostname            *string      `json:"hostname,omitempty"`
	HealthCheck         *HealthCheck `json:"healthCheck,omitempty"`
}

func (v view) service(st *state, svc *Service) serviceDoc {
	self := v.self(collectionOf(svc.Kind), svc.ID)
	d := serviceDoc{
		resource: resource{ID: svc.ID, Type: svc.Kind, BaseType: "service",
			Actions: actions(self, serviceActionsIn(svc.Kind, svc.State)...),
			Links: map[string]string{
				"self": self, "stack": v.self("stacks", svc.StackID),
				"consumedservices": self + "/consumedservices", "consumedbyservices": self + "/consumedbyservices",
			}},
		Name: svc.Name, Kind: svc.Kind, State: svc.State, HealthState: healthState(svc), StackID: svc.StackID,
		ExternalID: nullable(svc.ExternalID), Description: nullable(svc.Description), UUID: uuidFor(svc.ID),
		AccountID: st.opts.Project, LaunchConfig: svc.LaunchConfig, Metadata: svc.Metadata, Upgrade: svc.Upgrade,
		Created: svc.Created.Format(time.RFC3339), CreatedTS: svc.Created.UnixMilli(),
		Removed: timestamp(svc.Removed), Transitioning: transitioning(svc.State),
		TransitioningMessage: transitioningMessage(svc.State),
	}
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	if svc.Kind == KindLoadBalancer {
		eps := st.endpoints(svc)
		scale := max(svc.Scale, 1)
		current := 0
		if running(svc.State) {
			current = len(st.placement(svc))
		}
		d.LBConfig, d.Scale, d.CurrentScale = svc.LBConfig, &scale, &current
		d.PublicEndpoints = v.endpointDocs(svc.ID, eps)
		if d.LBConfig == nil {
			d.LBConfig = &LBConfig{}
		}
		if d.LBConfig.PortRules == nil {
			c := *d.LBConfig
			c.PortRules = []PortRule{}
			d.LBConfig = &c
		}
		if running(svc.State) {
			for _, h := range st.placement(svc) {
				d.InstanceIDs = append(d.InstanceIDs, instanceID(svc.ID, h.ID))
			}
		}
	} else {
		d.ExternalIPAddresses, d.Hostname, d.HealthCheck = svc.ExternalIPAddresses, nullable(svc.Hostname), svc.HealthCheck
		if d.ExternalIPAddresses == nil {
			d.ExternalIPAddresses = []string{}
		}
	}
	return d
}

// healthState is a service's: healthy while it runs, initializing while
// it starts, unhealthy when stopped.
func healthState(svc *Service) string {
	switch {
	case running(svc.State):
		return HealthHealthy
	case svc.State == StateActivating, svc.State == StateRegistering:
		return HealthInitializing
	}
	return HealthUnhealthy
}

var serviceFilterFields = serviceFilters

// ofKind returns the services of kind ("" for any), oldest first.
func (st *state) ofKind(kind string) []*Service {
	var out []*Service
	for _, svc := range st.services.All() {
		if kind == "" || svc.Kind == kind {
			out = append(out, svc)
		}
	}
	return out
}

func (s *Server) serviceList(r *http.Request, typ string, items []*Service) simkit.Response {
	v := s.view(r)
	return list(s, r, listing[Service]{
		typ: typ, items: items, id: func(svc *Service) string { return svc.ID },
		doc: func(svc *Service) any { return v.service(s.st, svc) }, filters: serviceFilterFields,
	})
}

func (s *Server) listServices(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		typ := kind
		if typ == "" {
			typ = "service"
		}
		return s.serviceList(r, typ, s.st.ofKind(kind))
	}
}

// findService returns the service of kind ("" for any) with the request's
// ID.
func (s *Server) findService(r *http.Request, kind string) (*Service, bool) {
	svc, found := s.st.services.Get(r.PathValue("id"))
	if !found || kind != "" && svc.Kind != kind {
		return nil, false
	}
	return svc, true
}

func (s *Server) getService(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		s.st.read(r.PathValue("id"))
		svc, found := s.findService(r, kind)
		if !found {
			return notFound()
		}
		return ok(s.view(r).service(s.st, svc))
	}
}

// consumed answers a service's consumedservices link (the services it
// links to) or consumedbyservices (those linking to it).
func (s *Server) consumed(kind string, consumes bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		svc, found := s.findService(r, kind)
		if !found {
			return notFound()
		}
		var items []*Service
		for _, other := range s.st.services.All() {
			if other.Removed != nil {
				continue
			}
			if consumes && svc.linksTo(other.ID) || !consumes && other.linksTo(svc.ID) {
				items = append(items, other)
			}
		}
		return s.serviceList(r, "service", items)
	}
}

func (svc *Service) linksTo(id string) bool {
	return slices.ContainsFunc(svc.Links, func(l ServiceLink) bool { return l.ServiceID == id })
}

// stackServices answers a stack's services link.
func (s *Server) stackServices(r *http.Request) simkit.Response {
	k, found := s.st.stacks.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var items []*Service
	for _, svc := range s.st.services.All() {
		if svc.StackID == k.ID {
			items = append(items, svc)
		}
	}
	return s.serviceList(r, "service", items)
}

// deleteService answers DELETE: the service's removal.
func (s *Server) deleteService(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		svc, found := s.findService(r, kind)
		if !found {
			return notFound()
		}
		if !slices.Contains(serviceActionsIn(svc.Kind, svc.State), "remove") {
			return fail(http.StatusConflict, "service %s is %s", svc.ID, svc.State)
		}
		s.st.removeService(svc)
		return ok(s.view(r).service(s.st, svc))
	}
}

// removeService removes a service: removing, then removed (with its
// removed timestamp; hidden by removed_null). The services that consume
// it lose their links to it.
func (st *state) removeService(svc *Service) {
	st.retire(svc.ID, &svc.State, &svc.Removed, func() {
		for _, other := range st.services.All() {
			other.Links = slices.DeleteFunc(other.Links, func(l ServiceLink) bool { return l.ServiceID == svc.ID })
		}
	})
}

// liveService returns the service with the ID unless it is removed.
func (st *state) liveService(id string) (*Service, bool) {
	svc, found := st.services.Get(id)
	if !found || svc.Removed != nil || svc.State == StateRemoving {
		return nil, false
	}
	return svc, true
}

// nameTaken reports whether a live service other than except is called
// name in the stack.
func (st *state) nameTaken(stackID, name, except string) bool {
	for _, svc := range st.services.All() {
		if svc.StackID == stackID && svc.Name == name && svc.ID != except && svc.Removed == nil {
			return true
		}
	}
	return false
}

// AddService seeds a service in its State (default active), as if made
// earlier (by the old CCM, for a migration test): ID "1s<n>" unless
// given, Kind KindLoadBalancer unless set, Created now; its stack must
// exist. It panics on a taken ID or an unknown stack, as a test's
// mistake.
func (s *Server) AddService(svc Service) Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.stacks.Get(svc.StackID); !ok {
		panic(fmt.Sprintf("ranchersim: service %q: no stack %q", svc.Name, svc.StackID))
	}
	if svc.Kind == "" {
		svc.Kind = KindLoadBalancer
	}
	if svc.State == "" {
		svc.State = StateActive
	}
	return s.st.addService(svc).clone()
}

func (st *state) addService(svc Service) *Service {
	st.admit(prefixService, &svc.ID, &svc.Created)
	c := svc.clone()
	st.services.Put(c.ID, &c)
	return &c
}

// Service returns a copy of the service with the ID.
func (s *Server) Service(id string) (Service, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.services, id, (*Service).clone)
}

// ServiceByName returns a copy of the oldest service called name that is
// not removed, in any stack.
func (s *Server) ServiceByName(name string) (Service, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, found := s.st.services.Find(func(svc *Service) bool { return svc.Name == name && svc.Removed == nil })
	if !found {
		return Service{}, false
	}
	return svc.clone(), true
}

// Services returns copies of the services, oldest first, removed ones
// too.
func (s *Server) Services() []Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.services.All(), (*Service).clone)
}

// Endpoints returns a load balancer's public endpoints, as its
// publicEndpoints field shows them now.
func (s *Server) Endpoints(id string) []Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, found := s.st.services.Get(id)
	if !found {
		return nil
	}
	return s.st.endpoints(svc)
}

// SetServiceState puts a service in state at once, whatever it was, as
// Cattle getting stuck or a user acting in the UI would.
func (s *Server) SetServiceState(id, state string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, found := s.st.services.Get(id)
	if found {
		s.st.life.Stop(id)
		svc.State = state
	}
	return found
}
