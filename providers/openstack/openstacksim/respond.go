package openstacksim

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Path prefixes of the services on the one listener.
const (
	identityPrefix = "/identity"
	computePrefix  = "/compute"
	computeV21     = computePrefix + "/v2.1"
	networkPrefix  = "/network"
	networkV2      = networkPrefix + "/v2.0"
	lbPrefix       = "/load-balancer"
	lbV2           = lbPrefix + "/v2.0"
	lbaas          = lbV2 + "/lbaas"
	imagePrefix    = "/image"
	imageV2        = imagePrefix + "/v2"
)

type response = simkit.Response

// service names the OpenStack service an operation or path belongs to.
func service(opOrPath string) string {
	p := simkit.OpName(opOrPath)
	for _, svc := range []string{identityPrefix, computePrefix, networkPrefix, lbPrefix, imagePrefix, volumePrefix} {
		if p == svc || strings.HasPrefix(p, svc+"/") {
			return svc
		}
	}
	return ""
}

// errorBody is the error body of the service op belongs to, as each real
// service sends it.
func errorBody(_ *http.Request, e simkit.ErrorInfo) any {
	msg := cmp.Or(e.Message, simkit.DefaultMessage(e.Status))
	switch service(e.Op) {
	case computePrefix, volumePrefix:
		return novaErrorBody(e.Status, msg)
	case networkPrefix:
		return neutronErrorBody(cmp.Or(e.Code, neutronType(e.Status)), msg)
	case lbPrefix:
		return octaviaErrorBody(e.Status, msg)
	case imagePrefix:
		return glanceErrorBody(e.Status, msg)
	default:
		return keystoneErrorBody(e.Status, msg)
	}
}

func keystoneErrorBody(status int, msg string) any {
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "title": http.StatusText(status)}}
}

// novaErrorKeys are the envelope keys of Nova's fault bodies.
var novaErrorKeys = map[int]string{
	http.StatusBadRequest:            "badRequest",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "itemNotFound",
	http.StatusMethodNotAllowed:      "badMethod",
	http.StatusNotAcceptable:         "notAcceptable",
	http.StatusConflict:              "conflictingRequest",
	http.StatusRequestEntityTooLarge: "overLimit",
	http.StatusTooManyRequests:       "overLimit",
	http.StatusNotImplemented:        "notImplemented",
	http.StatusServiceUnavailable:    "serviceUnavailable",
}

func novaErrorBody(status int, msg string) any {
	key := novaErrorKeys[status]
	if key == "" {
		key = "computeFault"
	}
	return map[string]any{key: map[string]any{"code": status, "message": msg}}
}

func novaError(status int, format string, args ...any) response {
	return simkit.JSON(status, novaErrorBody(status, fmt.Sprintf(format, args...)))
}

// neutronType is the NeutronError type of a generic error with status.
func neutronType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "HTTPBadRequest"
	case http.StatusNotFound:
		return "HTTPNotFound"
	case http.StatusConflict:
		return "HTTPConflict"
	case http.StatusTooManyRequests:
		return "HTTPTooManyRequests"
	case http.StatusServiceUnavailable:
		return "HTTPServiceUnavailable"
	default:
		return "HTTPInternalServerError"
	}
}

func neutronErrorBody(typ, msg string) any {
	return map[string]any{"NeutronError": map[string]any{"type": typ, "message": msg, "detail": ""}}
}

// neutronError answers with a NeutronError of type typ.
func neutronError(status int, typ, format string, args ...any) response {
	return simkit.JSON(status, neutronErrorBody(typ, fmt.Sprintf(format, args...)))
}

// neutronNotFound is Neutron's 404 for a resource kind such as "Port".
func neutronNotFound(kind, id string) response {
	typ := strings.ReplaceAll(kind, " ", "") + "NotFound"
	return neutronError(http.StatusNotFound, typ, "%s %s could not be found.", kind, id)
}

func neutronBadRequest(format string, args ...any) response {
	return neutronError(http.StatusBadRequest, "HTTPBadRequest", format, args...)
}

func octaviaErrorBody(status int, msg string) any {
	code := "Client"
	if status >= 500 {
		code = "Server"
	}
	return map[string]any{"faultcode": code, "faultstring": msg, "debuginfo": nil}
}

func octaviaError(status int, format string, args ...any) response {
	return simkit.JSON(status, octaviaErrorBody(status, fmt.Sprintf(format, args...)))
}

// octaviaNotFound is Octavia's NotFound: "Load Balancer <id> not found.".
func octaviaNotFound(kind, id string) response {
	return octaviaError(http.StatusNotFound, "%s %s not found.", kind, id)
}

// octaviaInvalid is Octavia's ValidationException (400).
func octaviaInvalid(format string, args ...any) response {
	return octaviaError(http.StatusBadRequest, "Validation failure: %s", fmt.Sprintf(format, args...))
}

// octaviaImmutable is Octavia's ImmutableObject (409): the answer to any
// change of a load balancer tree that is not ACTIVE.
func octaviaImmutable(kind, id string) response {
	return octaviaError(http.StatusConflict, "%s %s is immutable and cannot be updated.", kind, id)
}

// badBody answers a request body that does not decode, in the style of
// the service of op.
func badBody(op string, err error) response {
	switch service(op) {
	case computePrefix, volumePrefix:
		return novaError(http.StatusBadRequest, "Invalid request body: %v", err)
	case networkPrefix:
		return neutronBadRequest("Invalid input: %v", err)
	case lbPrefix:
		return octaviaError(http.StatusBadRequest, "Invalid input: %v", err)
	case imagePrefix:
		return glanceError(http.StatusBadRequest, "%v", err)
	}
	return simkit.JSON(http.StatusBadRequest, keystoneErrorBody(http.StatusBadRequest, err.Error()))
}

// link is an OpenStack link object.
type link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

func jsonOK(body any) response  { return simkit.JSON(http.StatusOK, body) }
func created(body any) response { return simkit.JSON(http.StatusCreated, body) }
func noContent() response       { return simkit.NoContent(http.StatusNoContent) }
