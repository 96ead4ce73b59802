package skeletonsim

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure: a simkit.Fault with Skeleton Cloud's
// error body. A request matching several faults gets the first one
// injected.
type Fault struct {
	// Op limits the fault to matching endpoints, written as the API
	// reference does, e.g. "PUT /v1/load-balancers/{id}", or a pattern as
	// simkit.Fault.Op takes it; "" matches every API endpoint (never /_sim).
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
	// Delay, Reset, Rate (drawn from the Options.Seed random source) and
	// Count are simkit.Fault's.
	Delay time.Duration
	Reset bool
	Rate  float64
	Count int
}

// kit is f as the Kit injects it: with Skeleton Cloud's error body, and
// Retry-After only when RetryAfter is set.
func (f Fault) kit() simkit.Fault {
	kf := simkit.Fault{
		Op: f.Op, Status: f.Status, RetryAfter: f.RetryAfter, NoRetryAfter: true,
		Delay: f.Delay, Reset: f.Reset, Rate: f.Rate, Count: f.Count,
	}
	if f.Status != 0 {
		body := errorBody(f.Status, cmp.Or(f.Message, "injected fault"))
		if f.Code != "" {
			body.Error.Code = f.Code
		}
		kf.Body = body
	}
	return kf
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
	f := Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Message: "rate limit exceeded"}
	return s.kit.InjectAll(f.kit(), ops...)
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
var lookupOperation = simkit.ResolveOperation(operations, func(op string) bool {
	return slices.Contains(slices.Collect(maps.Values(operations)), op)
})
