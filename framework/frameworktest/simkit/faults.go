package simkit

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fault is an injected API failure. A request matching several faults gets
// the first one injected.
type Fault struct {
	// Op limits the fault to matching endpoints: "" or "*" matches every
	// endpoint; an operation ("PUT /v2/things/{id}") matches it; an
	// operation ending in "*" ("GET /v2/things*") matches every operation
	// with that prefix; the method "*" matches any method ("* /v2/things*");
	// a method alone ("POST") matches every endpoint of that method.
	Op string
	// Status, when non-zero, is the HTTP status to answer with instead of
	// serving the request, with the simulator's error body.
	Status int
	// Code and Message make the simulator's error body (Options.ErrorBody):
	// the cloud's error code or type, and the message; "" means the
	// cloud's usual one for Status.
	Code    string
	Message string
	// Body, when non-nil, is the error body as is (Message is then unused):
	// encoded as JSON, or, with ContentType set, a string or []byte sent
	// verbatim.
	Body any
	// ContentType, when set, sends Body verbatim with this Content-Type
	// instead of as JSON, and without Options.Respond: a proxy's HTML 404
	// page, a router's plain-text one.
	ContentType string
	// Truncate serves the request, then sends only the first half of the
	// answer's body, with a Content-Length to match: a complete HTTP answer
	// whose JSON stops midway. It is the mutation TruncateHalf, applied
	// after Mutate when both are set.
	Truncate bool
	// Mutate, when set, serves the request, then sends the body Mutate
	// makes of the answer the simulator produced (its status and body,
	// after Options.Respond), with a Content-Length to match: truncated
	// JSON, a field of the wrong type, an unknown enum value (Mutation
	// makes such mutations from fuzz bytes). It may be called from
	// several requests at once.
	Mutate func(status int, body []byte) []byte
	// Header holds extra headers for the error answer.
	Header http.Header
	// RetryAfter, when positive, is sent as a Retry-After header (seconds,
	// rounded up). A status the Kit's Options.RetryAfterOn names (429 and
	// 503 by default) always carries one ("0" when RetryAfter is 0) unless
	// NoRetryAfter.
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
	// Do, when set, runs first (after Delay), outside the simulator's
	// locks: a test's hook into the middle of a reconcile, such as
	// expiring every token just before the Nth write. A fault with only a
	// Do then serves the request normally.
	Do func()
}

// Matches reports whether the fault applies to op.
func (f Fault) Matches(op string) bool {
	if path, ok := strings.CutPrefix(f.Op, "* "); ok {
		if _, opPath, found := strings.Cut(op, " "); found {
			op = opPath
		}
		return Fault{Op: path}.Matches(op)
	}
	switch {
	case f.Op == "" || f.Op == "*" || f.Op == op:
		return true
	case strings.HasSuffix(f.Op, "*"):
		return strings.HasPrefix(op, strings.TrimSuffix(f.Op, "*"))
	case !strings.Contains(f.Op, " "):
		return strings.HasPrefix(op, f.Op+" ")
	}
	return false
}

type activeFault struct {
	Fault
	used int
}

// Inject adds a fault. remove takes it out again (and is safe to call
// twice).
func (k *Kit) Inject(f Fault) (remove func()) {
	af := &activeFault{Fault: f}
	k.mu.Lock()
	k.faults = append(k.faults, af)
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.faults = slices.DeleteFunc(k.faults, func(x *activeFault) bool { return x == af })
	}
}

// InjectAll adds f once per operation of ops (with Op set to it), or once
// as it is when there are none. remove takes them all out again.
func (k *Kit) InjectAll(f Fault, ops ...string) (remove func()) {
	if len(ops) == 0 {
		return k.Inject(f)
	}
	removers := make([]func(), 0, len(ops))
	for _, op := range ops {
		f.Op = op
		removers = append(removers, k.Inject(f))
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

// Fail makes requests to ops (every endpoint when none) fail with status.
func (k *Kit) Fail(status int, ops ...string) (remove func()) {
	return k.InjectAll(Fault{Status: status}, ops...)
}

// RateLimit makes requests to ops (every endpoint when none) fail with 429
// Too Many Requests and a Retry-After header.
func (k *Kit) RateLimit(retryAfter time.Duration, ops ...string) (remove func()) {
	return k.InjectAll(Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}, ops...)
}

// ResetConnections makes requests to ops (every endpoint when none) end
// with a closed connection and no answer.
func (k *Kit) ResetConnections(ops ...string) (remove func()) {
	return k.InjectAll(Fault{Reset: true}, ops...)
}

// SetLatency delays every request by d from now on; 0 turns it off.
func (k *Kit) SetLatency(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.latency = d
}

// Latency returns the delay every request gets.
func (k *Kit) Latency() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.latency
}

// ClearFaults removes every injected fault and the latency.
func (k *Kit) ClearFaults() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.faults, k.latency = nil, 0
}

// pickFault returns the fault for a request to op, if any, and uses it up.
// The caller holds k.mu.
func (k *Kit) pickFault(op string) (Fault, bool) {
	for _, af := range k.faults {
		if !af.Matches(op) {
			continue
		}
		if af.Rate > 0 && af.Rate < 1 && k.rng.Float64() >= af.Rate {
			continue
		}
		af.used++
		if af.Count > 0 && af.used >= af.Count {
			k.faults = slices.DeleteFunc(k.faults, func(x *activeFault) bool { return x == af })
		}
		return af.Fault, true
	}
	return Fault{}, false
}

// apply acts out f on a request whose Delay has been served. done reports
// that the request was answered (or dropped); status is what the client
// saw, 0 for no answer.
func (k *Kit) apply(f Fault, w http.ResponseWriter, r *http.Request, op string) (status int, done bool) {
	if f.Do != nil {
		f.Do()
	}
	switch {
	case f.Reset:
		return statusReset, true // Wrap closes the connection, once the request is logged
	case f.Status != 0:
		resp := Response{Status: f.Status, Body: f.Body, Header: f.Header.Clone()}
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		if f.ContentType != "" {
			// Someone else's page: the API's Respond hook never sees it.
			resp.Header.Set("Content-Type", f.ContentType)
			resp.Body = rawBody(f.Body)
			return Write(w, r, resp), true
		}
		if k.opts.RetryAfterOn(f.Status) && !f.NoRetryAfter || f.RetryAfter > 0 {
			resp.Header.Set("Retry-After", RetryAfterSeconds(f.RetryAfter))
		}
		if resp.Body == nil {
			resp.Body = k.opts.ErrorBody(r, ErrorInfo{Op: op, Status: f.Status, Code: f.Code, Message: f.Message})
		}
		return k.write(w, r, op, resp), true
	default:
		return 0, false
	}
}

// RetryAfterSeconds formats d as a Retry-After value: whole seconds,
// rounded up.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int((max(d, 0) + time.Second - 1) / time.Second))
}

// DefaultMessage is the message of an injected fault with status.
func DefaultMessage(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Rate limit exceeded."
	case http.StatusNotFound:
		return "The resource could not be found."
	default:
		return "Injected fault: " + http.StatusText(status)
	}
}

// ResetConnection closes the client's connection without a response.
func ResetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// Sleep waits d, or less if the client goes away; it reports whether the
// client is still there.
func Sleep(r *http.Request, d time.Duration) bool {
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
