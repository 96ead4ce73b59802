package gbsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every API error: gobrightbox decodes it into
// brightbox.APIError's ErrorName and Errors.
type apiError struct {
	ErrorName string   `json:"error_name"`
	Errors    []string `json:"errors"`
}

// Error names the simulator answers with. Only missing_resource and
// Forbidden are taken from the SDK's documents; the others are plausible
// (the SDK and the existing CCM look at the status only).
const (
	errMissing      = "missing_resource"
	errBadRequest   = "bad_request"
	errInvalidArgs  = "invalid_arguments"
	errInvalidState = "invalid_state"
	errForbidden    = "Forbidden"
	errRateLimited  = "rate_limited"
	errServer       = "server_error"
	errUnauthorized = "unauthorized"
	msgNotFound     = "Resource not found"
)

// apiErrors are Brightbox's errors: an error name for each status
// (server_error for the others) and the API's messages for the failures
// the simulator injects.
var apiErrors = simkit.ErrorFormat{
	Codes: map[int]string{
		http.StatusBadRequest:          errBadRequest,
		http.StatusUnauthorized:        errUnauthorized,
		http.StatusForbidden:           errForbidden,
		http.StatusNotFound:            errMissing,
		http.StatusConflict:            errInvalidState,
		http.StatusUnprocessableEntity: errInvalidArgs,
		http.StatusTooManyRequests:     errRateLimited,
	},
	OtherCode: errServer,
	Messages: map[int]string{
		http.StatusNotFound:        msgNotFound,
		http.StatusTooManyRequests: "Too many requests, slow down",
	},
	Body: func(_ int, name, message string) any { return apiError{ErrorName: name, Errors: []string{message}} },
}

// fail is an error answer with the API's error body.
func fail(status int, format string, args ...any) simkit.Response {
	return apiErrors.Error(status, format, args...)
}

func notFound() simkit.Response { return fail(http.StatusNotFound, msgNotFound) }

// invalid is a 422: the request is well-formed but its values are not
// acceptable.
func invalid(format string, args ...any) simkit.Response {
	return fail(http.StatusUnprocessableEntity, format, args...)
}

// conflict is a 409: the resource's state does not allow the request.
func conflict(format string, args ...any) simkit.Response {
	return fail(http.StatusConflict, format, args...)
}

// badJSON answers a body that does not decode (an unknown enum value
// included).
func badJSON(err error) simkit.Response { return fail(http.StatusBadRequest, "%s", err.Error()) }

// decode reads r's JSON body into v; a missing body leaves v as it is
// when optional.
func decode(r *http.Request, v any, optional bool) *simkit.Response {
	decode := simkit.Decode
	if optional {
		decode = simkit.DecodeOptional
	}
	if err := decode(r, v); err != nil {
		resp := badJSON(err)
		return &resp
	}
	return nil
}

// list answers a list: every resource of t, as show renders it.
func list[T, J any](t *simkit.Table[T], show func(*T) J) simkit.Response {
	return ok(simkit.CloneAll(t.All(), show))
}

// get answers a GET of the resource of t with r's ID, as show renders it.
func get[T, J any](r *http.Request, t *simkit.Table[T], show func(*T) J) simkit.Response {
	x, found := t.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return ok(show(x))
}

// ok is a 200 with body.
func ok(body any) simkit.Response { return simkit.JSON(http.StatusOK, body) }

// accepted is a 202 with body: the API's answer to a change it carries
// out asynchronously.
func accepted(body any) simkit.Response { return simkit.JSON(http.StatusAccepted, body) }

// created is a 201 with body.
func created(body any) simkit.Response { return simkit.JSON(http.StatusCreated, body) }

// nullable is s, or JSON null when s is empty, as the API writes unset
// strings.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
