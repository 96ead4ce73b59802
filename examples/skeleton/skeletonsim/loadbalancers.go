package skeletonsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Valid spec values.
var (
	algorithms           = []string{"round_robin", "least_connections"}
	listenerProtocols    = []string{"TCP", "UDP"}
	healthCheckProtocols = []string{"tcp", "http"}
)

const (
	defaultAlgorithm        = "round_robin"
	defaultHealthCheckEvery = 10
	maxNameLength           = 255
)

// LoadBalancers returns every load balancer, sorted by ID.
func (s *Server) LoadBalancers() []LoadBalancer {
	return s.State().LoadBalancers
}

// Advance moves every provisioning load balancer to active.
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.provisioning.Advance()
}

// provision makes rec provisioning: it becomes active on its
// ProvisioningReads-th read, or on Advance. The caller holds s.mu.
func (s *Server) provision(rec *lbRecord) {
	rec.lb.Status = StatusProvisioning
	s.st.provisioning.Start(rec.lb.ID, func() { s.st.activate(rec) })
}

// AddLoadBalancer stores lb without validating it, for seeding a scenario,
// and returns it as stored: the spec gets the defaults POST would give it,
// an empty ID gets the next "lb-NNNNNN", an empty Status becomes "active"
// and an active load balancer without an IPv4 gets the next address.
func (s *Server) AddLoadBalancer(lb LoadBalancer) LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb = lb.clone()
	setDefaults(&lb.LoadBalancerSpec)
	if lb.ID == "" {
		lb.ID = s.st.newID("lb")
	}
	if lb.Status == "" {
		lb.Status = StatusActive
	}
	if lb.Status == StatusActive && lb.IPv4 == "" {
		lb.IPv4 = s.st.nextLBAddress()
	}
	rec := &lbRecord{lb: lb}
	s.st.loadBalancers[lb.ID] = rec
	if lb.Status == StatusProvisioning {
		s.provision(rec)
	}
	return rec.lb.clone()
}

// SetLoadBalancerError puts a load balancer in the "error" status with a
// message, as a cloud does when provisioning fails; it reports whether the
// load balancer exists.
func (s *Server) SetLoadBalancerError(id, message string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.st.loadBalancers[id]
	if ok {
		rec.lb.Status, rec.lb.ErrorMessage = StatusError, message
		s.st.provisioning.Stop(id)
	}
	return ok
}

// listLoadBalancers counts a read of each load balancer on the page, as
// getLoadBalancer does: a CCM that polls by listing sees provisioning end.
func (s *Server) listLoadBalancers(r *http.Request) (int, any) {
	tag := r.URL.Query().Get("tag")
	var all []*lbRecord
	for _, rec := range sortedValues(s.st.loadBalancers) {
		if tag == "" || slices.Contains(rec.lb.Tags, tag) {
			all = append(all, rec)
		}
	}
	page, meta, err := paginate(r, all, s.opts.PerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	out := make([]LoadBalancer, 0, len(page))
	for _, rec := range page {
		s.st.provisioning.Read(rec.lb.ID)
		out = append(out, rec.lb.clone())
	}
	return http.StatusOK, map[string]any{"load_balancers": out, "meta": meta}
}

func (s *Server) createLoadBalancer(r *http.Request) (int, any) {
	var spec LoadBalancerSpec
	if err := simkit.DecodeStrict(r, &spec); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	if msg := s.validate(&spec); msg != "" {
		return fail(http.StatusUnprocessableEntity, "%s", msg)
	}
	rec := &lbRecord{lb: LoadBalancer{ID: s.st.newID("lb"), LoadBalancerSpec: spec}}
	s.st.loadBalancers[rec.lb.ID] = rec
	s.provision(rec)
	return http.StatusCreated, map[string]any{"load_balancer": rec.lb.clone()}
}

// getLoadBalancer counts the read: the ProvisioningReads-th read (GET or
// list) of a provisioning load balancer finds it active.
func (s *Server) getLoadBalancer(r *http.Request) (int, any) {
	id := r.PathValue("id")
	rec, ok := s.st.loadBalancers[id]
	if !ok {
		return fail(http.StatusNotFound, "load balancer %q not found", id)
	}
	s.st.provisioning.Read(id)
	return http.StatusOK, map[string]any{"load_balancer": rec.lb.clone()}
}

// updateLoadBalancer replaces the whole spec; a provisioning load balancer
// cannot be changed yet.
func (s *Server) updateLoadBalancer(r *http.Request) (int, any) {
	id := r.PathValue("id")
	rec, ok := s.st.loadBalancers[id]
	if !ok {
		return fail(http.StatusNotFound, "load balancer %q not found", id)
	}
	if rec.lb.Status == StatusProvisioning {
		return fail(http.StatusConflict, "load balancer %q is provisioning; try again later", id)
	}
	var spec LoadBalancerSpec
	if err := simkit.DecodeStrict(r, &spec); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	if msg := s.validate(&spec); msg != "" {
		return fail(http.StatusUnprocessableEntity, "%s", msg)
	}
	rec.lb.LoadBalancerSpec = spec
	return http.StatusOK, map[string]any{"load_balancer": rec.lb.clone()}
}

func (s *Server) deleteLoadBalancer(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.loadBalancers[id]; !ok {
		return fail(http.StatusNotFound, "load balancer %q not found", id)
	}
	delete(s.st.loadBalancers, id)
	s.st.provisioning.Stop(id)
	return http.StatusNoContent, nil
}

// validate fills defaults into spec and returns every problem with it, or
// "" when it is valid. The caller holds s.mu.
func (s *Server) validate(spec *LoadBalancerSpec) string {
	setDefaults(spec)
	problems := validateSpec(spec)
	problems = append(problems, s.validateMembers(spec.Members)...)
	return strings.Join(problems, "; ")
}

// setDefaults fills in what the API defaults: round_robin, a TCP health
// check on the first listener's target port every 10 seconds, and empty
// lists rather than null.
func setDefaults(spec *LoadBalancerSpec) {
	if spec.Algorithm == "" {
		spec.Algorithm = defaultAlgorithm
	}
	hc := &spec.HealthCheck
	if hc.Protocol == "" {
		hc.Protocol = "tcp"
	}
	if hc.Port == 0 && len(spec.Listeners) > 0 {
		hc.Port = spec.Listeners[0].TargetPort
	}
	if hc.IntervalSeconds == 0 {
		hc.IntervalSeconds = defaultHealthCheckEvery
	}
	spec.Listeners, spec.Members, spec.Tags = nonNil(spec.Listeners), nonNil(spec.Members), nonNil(spec.Tags)
}

// validateSpec returns every problem with a defaulted spec except its
// members, which need the cloud's state.
func validateSpec(spec *LoadBalancerSpec) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if spec.Name == "" || len(spec.Name) > maxNameLength {
		bad("name must be 1 to %d characters", maxNameLength)
	}
	if !slices.Contains(algorithms, spec.Algorithm) {
		bad("unknown algorithm %q (want one of %s)", spec.Algorithm, strings.Join(algorithms, ", "))
	}
	problems = append(problems, validateListeners(spec.Listeners)...)
	problems = append(problems, validateHealthCheck(spec.HealthCheck)...)
	for _, t := range spec.Tags {
		if t == "" {
			bad("tags must not be empty")
		}
	}
	return problems
}

func validateListeners(ls []Listener) []string {
	if len(ls) == 0 {
		return []string{"at least one listener is required"}
	}
	var problems []string
	seen := map[Listener]bool{}
	for _, l := range ls {
		if !slices.Contains(listenerProtocols, l.Protocol) {
			problems = append(problems, fmt.Sprintf("listener %d: unknown protocol %q (want TCP or UDP)", l.Port, l.Protocol))
		}
		if !validPort(l.Port) || !validPort(l.TargetPort) {
			problems = append(problems, fmt.Sprintf("listener %s %d->%d: port out of range 1-65535", l.Protocol, l.Port, l.TargetPort))
		}
		key := Listener{Protocol: l.Protocol, Port: l.Port}
		if seen[key] {
			problems = append(problems, fmt.Sprintf("duplicate listener port %s %d", l.Protocol, l.Port))
		}
		seen[key] = true
	}
	return problems
}

func validateHealthCheck(hc HealthCheck) []string {
	var problems []string
	if !slices.Contains(healthCheckProtocols, hc.Protocol) {
		problems = append(problems, fmt.Sprintf("unknown health check protocol %q (want tcp or http)", hc.Protocol))
	}
	if !validPort(hc.Port) {
		problems = append(problems, fmt.Sprintf("health check port %d out of range 1-65535", hc.Port))
	}
	if hc.Protocol == "http" && !strings.HasPrefix(hc.Path, "/") {
		problems = append(problems, "an http health check needs a path starting with /")
	}
	if hc.Protocol == "tcp" && hc.Path != "" {
		problems = append(problems, "a tcp health check has no path")
	}
	if hc.IntervalSeconds < 1 || hc.IntervalSeconds > 300 {
		problems = append(problems, fmt.Sprintf("health check interval %ds out of range 1-300", hc.IntervalSeconds))
	}
	return problems
}

func (s *Server) validateMembers(members []string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, id := range members {
		if _, ok := s.st.instances[id]; !ok {
			problems = append(problems, fmt.Sprintf("unknown member instance %q", id))
		}
		if seen[id] {
			problems = append(problems, fmt.Sprintf("duplicate member instance %q", id))
		}
		seen[id] = true
	}
	return problems
}

func validPort(p int) bool { return p >= 1 && p <= 65535 }

// nonNil turns a nil slice into an empty one, so JSON says [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
