package skeletonsim

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Fault is an injected API failure. A request matching several faults gets
// the first one injected.
type Fault struct {
	// Op limits the fault to one endpoint, written as the API reference
	// does, e.g. "PUT /v1/load-balancers/{id}"; "" matches every API
	// endpoint (never /_sim).
	Op string
	// Status, when non-zero, is the HTTP status to answer with instead of
	// serving the request, with the API's error body.
	Status int
	// Code and Message make the error body; "" means the code for Status
	// and "injected fault".
	Code    string
	Message string
	// RetryAfter, when positive, is sent as a Retry-After header (seconds,
	// rounded up), e.g. with a 429.
	RetryAfter time.Duration
	// Delay holds the request this long first (latency). A fault with only
	// a Delay then serves the request normally.
	Delay time.Duration
	// Reset closes the connection without answering.
	Reset bool
	// Rate, between 0 and 1 exclusive, fails only that fraction of the
	// matching requests, drawn from the Options.Seed random source; any
	// other value fails all of them.
	Rate float64
	// Count, when positive, removes the fault after that many requests.
	Count int
}

type activeFault struct {
	Fault
	used int
}

// Inject adds a fault. remove takes it out again (and is safe to call
// twice).
func (s *Server) Inject(f Fault) (remove func()) {
	af := &activeFault{Fault: f}
	s.mu.Lock()
	s.faults = append(s.faults, af)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.faults = slices.DeleteFunc(s.faults, func(x *activeFault) bool { return x == af })
	}
}

// Fail makes requests to ops (every endpoint when none) fail with status.
func (s *Server) Fail(status int, ops ...string) (remove func()) {
	return s.injectAll(Fault{Status: status}, ops)
}

// RateLimit makes requests to ops (every endpoint when none) fail with 429
// Too Many Requests and a Retry-After header.
func (s *Server) RateLimit(retryAfter time.Duration, ops ...string) (remove func()) {
	return s.injectAll(Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Message: "rate limit exceeded"}, ops)
}

// ResetConnections makes requests to ops (every endpoint when none) end
// with a closed connection and no answer.
func (s *Server) ResetConnections(ops ...string) (remove func()) {
	return s.injectAll(Fault{Reset: true}, ops)
}

// SetLatency delays every API request (never /_sim) by d from now on; 0
// turns it off. InjectedLatency and /_sim/stats report the delay served.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// ClearFaults removes every injected fault and the latency.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.latency = nil, 0
}

func (s *Server) injectAll(f Fault, ops []string) (remove func()) {
	if len(ops) == 0 {
		return s.Inject(f)
	}
	removers := make([]func(), 0, len(ops))
	for _, op := range ops {
		f.Op = op
		removers = append(removers, s.Inject(f))
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

// pickFault returns the fault for a request to op, if any, and uses it up.
// The caller holds s.mu.
func (s *Server) pickFault(op string) (Fault, bool) {
	for _, af := range s.faults {
		if af.Op != "" && af.Op != op {
			continue
		}
		if af.Rate > 0 && af.Rate < 1 && s.rng.Float64() >= af.Rate {
			continue
		}
		af.used++
		if af.Count > 0 && af.used >= af.Count {
			s.faults = slices.DeleteFunc(s.faults, func(x *activeFault) bool { return x == af })
		}
		return af.Fault, true
	}
	return Fault{}, false
}

// apply acts out f on a request whose Delay the caller has already served.
// done reports that the request was answered (or dropped) and must not be
// served; status is what the client saw, 0 for no answer.
func (f Fault) apply(w http.ResponseWriter, r *http.Request) (status int, done bool) {
	switch {
	case f.Reset:
		resetConnection(w)
		return 0, true
	case f.Status != 0:
		if f.RetryAfter > 0 {
			secs := int((f.RetryAfter + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
		msg := f.Message
		if msg == "" {
			msg = "injected fault"
		}
		body := errorBody(f.Status, msg)
		if f.Code != "" {
			body.Error.Code = f.Code
		}
		writeJSON(w, f.Status, body)
		return f.Status, true
	default:
		return 0, false
	}
}

// resetConnection closes the client's connection without a response.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): abort the stream instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// sleep waits d, or less if the client goes away; it reports whether the
// client is still there.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// operations are the short names of the API's endpoints, for scenarios;
// keep them in step with routes (TestScenarioOperationsAreEndpoints).
var operations = map[string]string{
	"instances.list":       "GET /v1/instances",
	"instances.get":        "GET /v1/instances/{id}",
	"loadBalancers.list":   "GET /v1/load-balancers",
	"loadBalancers.create": "POST /v1/load-balancers",
	"loadBalancers.get":    "GET /v1/load-balancers/{id}",
	"loadBalancers.update": "PUT /v1/load-balancers/{id}",
	"loadBalancers.delete": "DELETE /v1/load-balancers/{id}",
	"routes.list":          "GET /v1/routes",
	"routes.create":        "POST /v1/routes",
	"routes.delete":        "DELETE /v1/routes/{id}",
}

// allOperations is a scenario fault's operation for every endpoint.
const allOperations = "*"

// lookupOperation returns the Fault.Op for a scenario's operation: "" for
// "*", the endpoint for a short name, op itself for an endpoint. ok is
// false for anything else.
func lookupOperation(op string) (endpoint string, ok bool) {
	if op == allOperations {
		return "", true
	}
	if ep, ok := operations[op]; ok {
		return ep, true
	}
	for _, ep := range operations {
		if ep == op {
			return ep, true
		}
	}
	return "", false
}
