package tritonsim

import "github.com/ccmkit/ccmkit/framework/frameworktest/simkit"

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "GET /{account}/machines/{id}", or a
// pattern as simkit.Fault.Op takes it; "" matches every endpoint (never
// /--ping or /_sim). Code and Message make the error body's code and
// message: "" means the ones CloudAPI sends for Status (RequestThrottled
// for 429, ResourceNotFound for 404...).
type Fault = simkit.Fault
