package gbsim

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "PUT /1.0/load_balancers/{id}", or a
// pattern as simkit.Fault.Op takes it; "" matches every endpoint (the
// token endpoint included, never /_sim). Code and Message make the error
// body's error_name and its one errors entry: "" means the ones the API
// sends for Status.
type Fault = simkit.Fault

// UnknownStatus is the status value CorruptStatus writes: one no
// gobrightbox enum has.
const UnknownStatus = "exploded"

type corruption struct {
	op    string
	count int
}

// CorruptStatus makes the successful answers of op (an endpoint or
// pattern, as Fault.Op) carry the unknown value UnknownStatus in every
// top-level "status" field (of the object, or of each object of a list),
// as a newer API might: a malformed answer the client must turn into an
// error. count > 0 corrupts only that many answers. remove takes it out.
func (s *Server) CorruptStatus(op string, count int) (remove func()) {
	c := &corruption{op: op, count: count}
	s.corruptMu.Lock()
	s.corrupt = append(s.corrupt, c)
	s.corruptMu.Unlock()
	return func() {
		s.corruptMu.Lock()
		defer s.corruptMu.Unlock()
		s.corrupt = slices.DeleteFunc(s.corrupt, func(x *corruption) bool { return x == c })
	}
}

// respond applies CorruptStatus to the answers it names.
func (s *Server) respond(_ *http.Request, op string, resp simkit.Response) simkit.Response {
	if resp.Status < 200 || resp.Status > 299 || resp.Body == nil || !s.takeCorruption(op) {
		return resp
	}
	data, err := json.Marshal(resp.Body)
	if err != nil {
		return resp
	}
	var one map[string]any
	var many []map[string]any
	switch {
	case json.Unmarshal(data, &one) == nil:
		one["status"] = UnknownStatus
		resp.Body = one
	case json.Unmarshal(data, &many) == nil:
		for _, m := range many {
			m["status"] = UnknownStatus
		}
		resp.Body = many
	}
	return resp
}

func (s *Server) takeCorruption(op string) bool {
	s.corruptMu.Lock()
	defer s.corruptMu.Unlock()
	for _, c := range s.corrupt {
		if !(simkit.Fault{Op: c.op}).Matches(op) {
			continue
		}
		if c.count > 0 {
			if c.count--; c.count == 0 {
				s.corrupt = slices.DeleteFunc(s.corrupt, func(x *corruption) bool { return x == c })
			}
		}
		return true
	}
	return false
}
