package skeletonsim

import (
	"cmp"
	"net/http"
	"net/netip"
)

// AddInstance stores inst and returns it as stored: an empty ID gets the
// next "i-NNNNNN", an empty Status becomes "running" and an empty Type
// DefaultInstanceType (every instance has a type). An instance with an
// existing ID replaces it.
func (s *Server) AddInstance(inst Instance) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inst.ID == "" {
		inst.ID = s.st.newID("i")
	}
	if inst.Status == "" {
		inst.Status = StatusRunning
	}
	inst.Type = cmp.Or(inst.Type, DefaultInstanceType)
	s.st.instances[inst.ID] = &inst
	return inst
}

// Defaults LaunchInstance gives an instance.
const (
	DefaultInstanceType = "s-2"
	DefaultRegion       = "sk-1"
)

// LaunchInstance stores inst as a cloud would boot it and returns it as
// stored: besides what AddInstance fills in, an empty Region becomes
// DefaultRegion, an empty Zone the region's zone "a" (e.g. "sk-1a"), and
// empty addresses the next host's: 10.0.0.2, 203.0.113.2 and 2001:db8::2
// for the first instance launched, 10.0.0.3... for the next. Set an
// address to "none" to leave it empty.
func (s *Server) LaunchInstance(inst Instance) Instance {
	s.mu.Lock()
	s.st.hosts++
	private, public, public6 := hostAddresses(s.st.hosts)
	s.mu.Unlock()

	inst.Region = cmp.Or(inst.Region, DefaultRegion)
	inst.Zone = cmp.Or(inst.Zone, inst.Region+"a")
	inst.PrivateIPv4 = address(inst.PrivateIPv4, private)
	inst.PublicIPv4 = address(inst.PublicIPv4, public)
	inst.PublicIPv6 = address(inst.PublicIPv6, public6)
	return s.AddInstance(inst)
}

// address is an instance address as LaunchInstance stores it.
func address(given string, next netip.Addr) string {
	switch given {
	case "":
		return next.String()
	case "none":
		return ""
	default:
		return given
	}
}

// DeleteInstance removes an instance. Load-balancer members and routes that
// point at it are left dangling, as in a real cloud.
func (s *Server) DeleteInstance(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.instances, id)
}

// SetInstanceStatus sets an instance's status ("running" or "stopped"); it
// reports whether the instance exists.
func (s *Server) SetInstanceStatus(id, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, ok := s.st.instances[id]
	if ok {
		inst.Status = status
	}
	return ok
}

// Instances returns every instance, sorted by ID.
func (s *Server) Instances() []Instance {
	return s.State().Instances
}

func (s *Server) listInstances(r *http.Request) (int, any) {
	all := make([]Instance, 0, len(s.st.instances))
	for _, inst := range sortedValues(s.st.instances) {
		all = append(all, *inst)
	}
	page, meta, err := paginate(r, all, s.opts.PerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	return http.StatusOK, map[string]any{"instances": page, "meta": meta}
}

func (s *Server) getInstance(r *http.Request) (int, any) {
	id := r.PathValue("id")
	inst, ok := s.st.instances[id]
	if !ok {
		return fail(http.StatusNotFound, "instance %q not found", id)
	}
	return http.StatusOK, map[string]any{"instance": inst}
}
