package tritonsim

import (
	"maps"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// listMetadata serves ListMachineMetadata: the map of keys to string
// values.
func (s *Server) listMetadata(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	return ok(cloneMap(m.Metadata))
}

// updateMetadata serves UpdateMachineMetadata (POST): the body's keys
// merged into the machine's; values must be strings. Answers with all of
// them.
func (s *Server) updateMetadata(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	body := map[string]any{}
	if fail := decode(r, &body); fail != nil {
		return *fail
	}
	values := make(map[string]string, len(body))
	for _, k := range sortedKeys(body) {
		v, isString := body[k].(string)
		if !isString {
			return invalid("metadata %s must be a string", k)
		}
		values[k] = v
	}
	maps.Copy(m.Metadata, values)
	s.st.touch(m)
	return ok(cloneMap(m.Metadata))
}

// getMetadata serves GetMachineMetadata: the value as a JSON string.
func (s *Server) getMetadata(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	v, set := m.Metadata[r.PathValue("key")]
	if !set {
		return notFound("metadata key", r.PathValue("key"))
	}
	return ok(v)
}

func (s *Server) deleteMetadata(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	if _, set := m.Metadata[r.PathValue("key")]; !set {
		return notFound("metadata key", r.PathValue("key"))
	}
	delete(m.Metadata, r.PathValue("key"))
	s.st.touch(m)
	return noContent()
}

func (s *Server) deleteAllMetadata(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	m.Metadata = map[string]string{}
	s.st.touch(m)
	return noContent()
}
