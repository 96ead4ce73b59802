package tritonsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// written as the routes are, e.g. "GET /{account}/machines/{id}", or a
// pattern as simkit.Fault.Op takes it; "" matches every endpoint (never
// /--ping or /_sim). Code and Message make the error body's code and
// message: "" means the ones CloudAPI sends for Status (RequestThrottled
// for 429, ResourceNotFound for 404...).
type Fault = simkit.Fault

// faultMessage is the message of an injected fault with status.
func faultMessage(status int) string {
	switch status {
	case http.StatusNotFound:
		return "resource not found"
	case http.StatusTooManyRequests:
		return "You have exceeded your request rate"
	case http.StatusServiceUnavailable:
		return "service unavailable"
	}
	return simkit.DefaultMessage(status)
}
