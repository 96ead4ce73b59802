package dosim

import (
	"net/http"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure: a simkit.Fault with DigitalOcean's
// error body. A request matching several faults gets the first one
// injected.
type Fault struct {
	// Op limits the fault to matching endpoints, written as the routes are,
	// e.g. "PUT /v2/load_balancers/{id}", or a pattern as simkit.Fault.Op
	// takes it; "" matches every API endpoint (never /_sim).
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
	// Delay, Reset, Rate (drawn from the Options.Seed random source) and
	// Count are simkit.Fault's.
	Delay time.Duration
	Reset bool
	Rate  float64
	Count int
}

// kit is f as the Kit injects it.
func (f Fault) kit() simkit.Fault {
	kf := simkit.Fault{
		Op: f.Op, Status: f.Status, RetryAfter: f.RetryAfter, Delay: f.Delay, Reset: f.Reset, Rate: f.Rate, Count: f.Count,
		NoRetryAfter: f.NoRetryAfter || f.Status != http.StatusTooManyRequests,
	}
	if f.Status != 0 {
		body := apiError{ID: f.ID, Message: f.Message}
		if body.ID == "" {
			body.ID = errorID(f.Status)
		}
		if body.Message == "" {
			body.Message = faultMessage(f.Status)
		}
		kf.Body = body
	}
	return kf
}

// faultOf is a scenario's fault as Options takes it.
func faultOf(f simkit.Fault) Fault {
	return Fault{
		Op: f.Op, Status: f.Status, Message: f.Message, RetryAfter: f.RetryAfter,
		Delay: f.Delay, Reset: f.Reset, Rate: f.Rate, Count: f.Count,
	}
}

// faultMessage is the message of an injected fault with status.
func faultMessage(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return msgRateLimited
	case http.StatusUnauthorized:
		return msgUnauthorized
	case http.StatusNotFound:
		return msgNotFound
	}
	return simkit.DefaultMessage(status)
}

// Inject adds a fault. remove takes it out again (and is safe to call
// twice).
func (s *Server) Inject(f Fault) (remove func()) { return s.kit.Inject(f.kit()) }

// Fail makes requests to ops (every endpoint when none) fail with status.
func (s *Server) Fail(status int, ops ...string) (remove func()) {
	return s.kit.InjectAll(Fault{Status: status}.kit(), ops...)
}

// RateLimit makes requests to ops (every endpoint when none) fail with 429
// Too Many Requests and a Retry-After header.
func (s *Server) RateLimit(retryAfter time.Duration, ops ...string) (remove func()) {
	return s.kit.InjectAll(Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}.kit(), ops...)
}
