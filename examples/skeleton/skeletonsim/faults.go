package skeletonsim

import (
	"net/http"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the API reference does, e.g. "PUT /v1/load-balancers/{id}",
// or a pattern as simkit.Fault.Op takes it; "" matches every API endpoint
// (never /_sim). Code and Message make the error body: "" means the code
// for Status and "injected fault". Retry-After is sent only when
// RetryAfter is set.
type Fault = simkit.Fault

// RateLimit makes requests to ops (every endpoint when none) fail with 429
// Too Many Requests, "rate limit exceeded" and a Retry-After header.
func (s *Server) RateLimit(retryAfter time.Duration, ops ...string) (remove func()) {
	f := Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Message: "rate limit exceeded"}
	return s.Kit().InjectAll(f, ops...)
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

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint.
var scenarioOperations = simkit.ServedOperations(operations, func() []string { return New(Options{}).Operations() })
