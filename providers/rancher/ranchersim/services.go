package ranchersim

func (s *Server) serviceRoutes() {}

// removeService removes a service: removing, then removed (with its
// removed timestamp; hidden by removed_null). Services that consume it
// lose their links to it.
func (st *state) removeService(svc *Service) {
	st.transition(svc.ID, func(state string) {
		svc.State = state
		if state == StateRemoved {
			t := st.now()
			svc.Removed = &t
		}
	}, StateRemoving, StateRemoved)
}
