package ranchersim

import "github.com/ccmkit/ccmkit/framework/frameworktest/simkit"

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "GET /v2-beta/projects/{project}/hosts",
// or a pattern as simkit.Fault.Op takes it; "" matches every endpoint
// (never /_sim). Code and Message make the error body's code and message:
// "" means the ones Cattle sends for Status ("Not Found" for 404...).
type Fault = simkit.Fault
