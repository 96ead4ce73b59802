package ranchersim

import (
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// createService answers POST: 201 with the service registering; it
// settles inactive (or, with startOnCreate, goes on to active).
func (s *Server) createService(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		var in serviceInput
		if resp := decode(r, &in); resp != nil {
			return *resp
		}
		if p := s.st.checkCreate(kind, &in); p != nil {
			return p.response()
		}
		svc := s.st.addService(Service{
			Kind: kind, Name: *in.Name, StackID: *in.StackID, ExternalID: deref(in.ExternalID),
			Description: deref(in.Description), Scale: deref(in.Scale), LaunchConfig: in.LaunchConfig.clone(),
			LBConfig: in.LBConfig.clone(), ExternalIPAddresses: in.ExternalIPAddresses, Hostname: deref(in.Hostname),
			HealthCheck: in.HealthCheck, Metadata: in.Metadata, State: StateRegistering,
		})
		start := in.StartOnCreate
		s.st.transition(svc.ID, func(state string) {
			svc.State = state
			if state == StateInactive && start {
				s.st.transition(svc.ID, func(state string) { svc.State = state }, StateActivating, StateActive)
			}
		}, StateRegistering, StateInactive)
		return created(s.view(r).service(s.st, svc))
	}
}

// updateService answers PUT: name, description, metadata, a load
// balancer's scale and lbConfig, an external service's
// externalIpAddresses and hostname change; the fields the schema does not
// mark updatable are dropped, as Cattle's validation drops them:
// launchConfig (a load balancer's ports change by upgrade), stackId,
// externalId and an external service's healthCheck (update false in the
// v2-beta schema: a new health check needs a new external service). An
// active service goes through updating-active, an inactive one through
// updating-inactive.
func (s *Server) updateService(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		svc, found := s.findService(r, kind)
		if !found {
			return notFound()
		}
		var in serviceInput
		if resp := decodeUpdate(r, mustSchema(svc.Kind), &in); resp != nil {
			return *resp
		}
		if in.Name != nil {
			if _, bad := checkName(*in.Name); bad {
				return nameProblem(*in.Name).response()
			}
			if s.st.nameTaken(svc.StackID, *in.Name, svc.ID) {
				return invalid(codeNotUnique, "name")
			}
		}
		if p := s.st.checkFields(&in); p != nil {
			return p.response()
		}
		s.st.apply(svc, &in)
		s.st.updated(svc)
		return ok(s.view(r).service(s.st, svc))
	}
}

// apply sets the fields in gives.
func (st *state) apply(svc *Service, in *serviceInput) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&svc.Name, in.Name)
	set(&svc.Description, in.Description)
	set(&svc.Hostname, in.Hostname)
	if in.Scale != nil {
		svc.Scale = *in.Scale
	}
	if in.LBConfig != nil {
		svc.LBConfig = in.LBConfig.clone()
	}
	if in.ExternalIPAddresses != nil {
		svc.ExternalIPAddresses = slices.Clone(in.ExternalIPAddresses)
	}
	if in.HealthCheck != nil {
		hc := *in.HealthCheck
		svc.HealthCheck = &hc
	}
	if in.Metadata != nil {
		svc.Metadata = in.Metadata
	}
}

// updated runs Cattle's update process: active -> updating-active ->
// active, inactive -> updating-inactive -> inactive; other states keep
// the change for their next step.
func (st *state) updated(svc *Service) {
	set := func(state string) { svc.State = state }
	switch svc.State {
	case StateActive:
		st.transition(svc.ID, set, StateUpdatingActive, StateActive)
	case StateInactive:
		st.transition(svc.ID, set, StateUpdatingInactive, StateInactive)
	}
}

// linkInput is the input of setservicelinks, addservicelink and
// removeservicelink.
type linkInput struct {
	ServiceLinks []ServiceLink `json:"serviceLinks"`
	ServiceLink  *ServiceLink  `json:"serviceLink"`
}

// serviceAction answers POST <service>?action=.
func (s *Server) serviceAction(kind string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		svc, found := s.findService(r, kind)
		if !found {
			return notFound()
		}
		name := r.URL.Query().Get("action")
		if resp, bad := checkAction(mustSchema(svc.Kind), serviceActionsIn(svc.Kind, svc.State), name); bad {
			return resp
		}
		if resp, bad := s.st.act(r, svc, name); bad {
			return resp
		}
		return accepted(s.view(r).service(s.st, svc))
	}
}

// act carries out an action the service's state offers.
func (st *state) act(r *http.Request, svc *Service, name string) (simkit.Response, bool) {
	set := func(state string) { svc.State = state }
	switch name {
	case "activate":
		st.transition(svc.ID, set, StateActivating, StateActive)
	case "deactivate":
		st.transition(svc.ID, set, StateDeactivating, StateInactive)
	case "restart":
		st.transition(svc.ID, set, StateRestarting, StateActive)
	case "remove":
		st.removeService(svc)
	case "update":
		st.updated(svc)
	case "upgrade":
		return st.upgrade(r, svc)
	case "finishupgrade":
		st.transition(svc.ID, set, StateFinishingUpgrade, StateActive)
	case "cancelupgrade":
		st.transition(svc.ID, set, StateCancelingUpgrade, StateCanceledUpgrade)
	case "continueupgrade":
		st.transition(svc.ID, set, StateUpgrading, StateUpgraded)
	case "rollback":
		if u := svc.Upgrade; u != nil && u.InServiceStrategy != nil && u.InServiceStrategy.PreviousLaunchConfig != nil {
			svc.LaunchConfig = u.InServiceStrategy.PreviousLaunchConfig.clone()
		}
		st.transition(svc.ID, set, StateRollingBack, StateActive)
	case "setservicelinks", "addservicelink", "removeservicelink":
		return st.link(r, svc, name)
	}
	return simkit.Response{}, false
}

// upgrade starts an in-service upgrade: the service keeps its ID and
// takes the new launch config at once; its containers (and public
// endpoints) follow when it settles upgraded; finishupgrade makes it
// active, rollback restores the previous launch config.
func (st *state) upgrade(r *http.Request, svc *Service) (simkit.Response, bool) {
	var in ServiceUpgrade
	if resp := decode(r, &in); resp != nil {
		return *resp, true
	}
	is := in.InServiceStrategy
	switch {
	case is == nil:
		return invalid(codeMissingRequired, "inServiceStrategy"), true
	case is.LaunchConfig == nil:
		return invalid(codeMissingRequired, "launchConfig"), true
	}
	if p := checkLaunchConfig(is.LaunchConfig); p != nil {
		return p.response(), true
	}
	svc.Upgrade = &ServiceUpgrade{InServiceStrategy: &InServiceStrategy{
		LaunchConfig: is.LaunchConfig.clone(), PreviousLaunchConfig: svc.LaunchConfig.clone(),
		StartFirst: is.StartFirst, BatchSize: max(is.BatchSize, 1), IntervalMillis: max(is.IntervalMillis, 2000),
	}}
	svc.LaunchConfig = is.LaunchConfig.clone()
	st.transition(svc.ID, func(state string) { svc.State = state }, StateUpgrading, StateUpgraded)
	return simkit.Response{}, false
}

// link changes a load balancer's service links.
func (st *state) link(r *http.Request, svc *Service, name string) (simkit.Response, bool) {
	var in linkInput
	if resp := decode(r, &in); resp != nil {
		return *resp, true
	}
	links := in.ServiceLinks
	if name != "setservicelinks" {
		if in.ServiceLink == nil {
			return invalid(codeMissingRequired, "serviceLink"), true
		}
		links = []ServiceLink{*in.ServiceLink}
	}
	if p := st.checkLinks(links); p != nil {
		return p.response(), true
	}
	switch name {
	case "setservicelinks":
		svc.Links = slices.Clone(links)
	case "addservicelink":
		svc.Links = append(slices.DeleteFunc(svc.Links, func(l ServiceLink) bool { return l.ServiceID == links[0].ServiceID }), links[0])
	case "removeservicelink":
		svc.Links = slices.DeleteFunc(svc.Links, func(l ServiceLink) bool { return l.ServiceID == links[0].ServiceID })
	}
	st.updated(svc)
	return simkit.Response{}, false
}
