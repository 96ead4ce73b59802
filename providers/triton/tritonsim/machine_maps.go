package tritonsim

import (
	"maps"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// machineMap is one of a machine's maps of keys to values, its tags or
// its metadata: CloudAPI lists, reads and deletes their keys alike (and
// writes them each its own way: addTags, replaceTags, updateMetadata).
type machineMap[V any] struct {
	// kind is what a 404 calls a key: "tag", "metadata key".
	kind string
	// of is the map of a machine.
	of func(*Machine) *map[string]V
	// removed and cleared are the audit actions of deleting one key and
	// every key: CloudAPI deletes a tag, every tag and a metadata key
	// through VMAPI's remove_*, but every metadata key by replacing them
	// all (keeping the credentials), so replace_metadata.
	removed, cleared string
}

var (
	// machineTags are a machine's tags: strings, numbers or booleans.
	machineTags = machineMap[any]{kind: "tag", of: func(m *Machine) *map[string]any { return &m.Tags },
		removed: auditRemoveTags, cleared: auditRemoveTags}
	// machineMetadata are a machine's metadata: strings.
	machineMetadata = machineMap[string]{kind: "metadata key", of: func(m *Machine) *map[string]string { return &m.Metadata },
		removed: auditRemoveMetadata, cleared: auditReplaceMetadata}
)

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
	s.st.job(m.ID, auditSetMetadata, callerOf(r))
	return ok(cloneMap(m.Metadata))
}

// list serves ListMachineTags and ListMachineMetadata: the whole map.
func (mm machineMap[V]) list(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		m, fail := s.liveMachine(r)
		if fail != nil {
			return *fail
		}
		return ok(cloneMap(*mm.of(m)))
	}
}

// get serves GetMachineTag and GetMachineMetadata: the key's value as
// JSON (a metadata value is a string, a tag's may be a number or a
// boolean too).
func (mm machineMap[V]) get(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		m, fail := s.liveMachine(r)
		if fail != nil {
			return *fail
		}
		v, set := (*mm.of(m))[r.PathValue("key")]
		if !set {
			return notFound(mm.kind, r.PathValue("key"))
		}
		return ok(v)
	}
}

// delete serves DeleteMachineTag and DeleteMachineMetadata: one key.
func (mm machineMap[V]) delete(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		m, fail := s.liveMachine(r)
		if fail != nil {
			return *fail
		}
		values := *mm.of(m)
		if _, set := values[r.PathValue("key")]; !set {
			return notFound(mm.kind, r.PathValue("key"))
		}
		delete(values, r.PathValue("key"))
		s.st.touch(m)
		s.st.job(m.ID, mm.removed, callerOf(r))
		return noContent()
	}
}

// deleteAll serves DeleteMachineTags and DeleteAllMachineMetadata: every
// key.
func (mm machineMap[V]) deleteAll(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		m, fail := s.liveMachine(r)
		if fail != nil {
			return *fail
		}
		*mm.of(m) = map[string]V{}
		s.st.touch(m)
		s.st.job(m.ID, mm.cleared, callerOf(r))
		return noContent()
	}
}
