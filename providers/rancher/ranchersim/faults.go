package ranchersim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "GET /v2-beta/projects/{project}/hosts",
// or a pattern as simkit.Fault.Op takes it; "" matches every endpoint
// (never /_sim). Code and Message make the error body's code and message:
// "" means the ones Cattle sends for Status (NotFound for 404...).
type Fault = simkit.Fault

// faultMessage is the message of an injected fault with status.
func faultMessage(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Not Found"
	case http.StatusServiceUnavailable:
		return "Service Unavailable"
	}
	return simkit.DefaultMessage(status)
}
