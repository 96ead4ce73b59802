package dosim

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Fault is an injected API failure. A request matching several faults gets
// the first one injected.
type Fault struct {
	// Op limits the fault to one endpoint, written as the routes are, e.g.
	// "PUT /v2/load_balancers/{id}"; "" matches every API endpoint (never
	// /_sim).
	Op string
	// Status, when non-zero, is the HTTP status to answer with instead of
	// serving the request, with the API's error body.
	Status int
	// ID and Message make the error body; "" means the ID for Status and a
	// message fitting it.
	ID      string
	Message string
	// RetryAfter, when positive, is sent as a Retry-After header (seconds,
	// rounded up). A 429 always carries one ("0" when RetryAfter is 0)
	// unless NoRetryAfter.
	RetryAfter   time.Duration
	NoRetryAfter bool
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
	return s.injectAll(Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}, ops)
}

// ResetConnections makes requests to ops (every endpoint when none) end
// with a closed connection and no answer.
func (s *Server) ResetConnections(ops ...string) (remove func()) {
	return s.injectAll(Fault{Reset: true}, ops)
}

// SetLatency delays every API request (never /_sim) by d from now on; 0
// turns it off.
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

// apply acts out f on a request whose Delay has been served. done
// reports that the request was answered (or dropped); status is what the
// client saw, 0 for no answer.
func (f Fault) apply(w http.ResponseWriter, requestID string) (status int, done bool) {
	switch {
	case f.Reset:
		resetConnection(w)
		return 0, true
	case f.Status != 0:
		if f.Status == http.StatusTooManyRequests && !f.NoRetryAfter || f.RetryAfter > 0 {
			secs := int((f.RetryAfter + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
		id, msg := f.ID, f.Message
		if id == "" {
			if id = errorIDs[f.Status]; id == "" {
				id = "error"
			}
		}
		if msg == "" {
			switch f.Status {
			case http.StatusTooManyRequests:
				msg = msgRateLimited
			case http.StatusUnauthorized:
				msg = msgUnauthorized
			case http.StatusNotFound:
				msg = msgNotFound
			default:
				msg = "Injected fault: " + http.StatusText(f.Status)
			}
		}
		writeJSON(w, f.Status, apiError{ID: id, Message: msg, RequestID: requestID})
		return f.Status, true
	default:
		return 0, false
	}
}

// resetConnection closes the client's connection without a response.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
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
