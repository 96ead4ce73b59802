package dosim

import "github.com/ccmkit/ccmkit/framework/frameworktest/simkit"

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "PUT /v2/load_balancers/{id}", or a
// pattern as simkit.Fault.Op takes it; "" matches every API endpoint (never
// /_sim). Code and Message make the error body's id and message: "" means
// the ones the API sends for Status. Only a 429 carries a Retry-After
// header unless RetryAfter is set.
type Fault = simkit.Fault
