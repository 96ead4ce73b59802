package skeletonsim

import (
	"net/http"
)

// AddInstance stores inst and returns it as stored: an empty ID gets the
// next "i-NNNNNN" and an empty Status becomes "running". An instance with
// an existing ID replaces it.
func (s *Server) AddInstance(inst Instance) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inst.ID == "" {
		inst.ID = s.st.newID("i")
	}
	if inst.Status == "" {
		inst.Status = StatusRunning
	}
	s.st.instances[inst.ID] = &inst
	return inst
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
