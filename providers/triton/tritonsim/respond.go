package tritonsim

import (
	"cmp"
	"fmt"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every CloudAPI error: triton-go decodes it into
// errors.APIError's Code and Message.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes the simulator answers with (cloud-apis.md §4.4, sdc-cloudapi
// docs/index.md "Errors").
const (
	codeNotFound         = "ResourceNotFound"
	codeInvalidArgument  = "InvalidArgument"
	codeValidationFailed = "ValidationFailed"
	codeInvalidCreds     = "InvalidCredentials"
	codeInvalidSignature = "InvalidSignature"
	codeNotAuthorized    = "NotAuthorized"
	codeThrottled        = "RequestThrottled"
	codeBadRequest       = "BadRequest"
	codeMoved            = "ResourceMoved"
	codeInternal         = "InternalError"
	codeUnavailable      = "ServiceUnavailable"
	codeInsufficient     = "InsufficientCapacity"
)

// codes are the error codes for the statuses the simulator answers with.
var codes = map[int]string{
	http.StatusBadRequest:         codeBadRequest,
	http.StatusUnauthorized:       codeInvalidCreds,
	http.StatusForbidden:          codeNotAuthorized,
	http.StatusNotFound:           codeNotFound,
	http.StatusGone:               codeNotFound,
	http.StatusConflict:           codeInvalidArgument,
	http.StatusTooManyRequests:    codeThrottled,
	http.StatusServiceUnavailable: codeUnavailable,
}

func codeFor(status int) string { return cmp.Or(codes[status], codeInternal) }

// errorBody is the body of the errors the Kit answers itself (injected
// faults, oversized bodies).
func errorBody(_ *http.Request, e simkit.ErrorInfo) any {
	return apiError{Code: cmp.Or(e.Code, codeFor(e.Status)), Message: cmp.Or(e.Message, faultMessage(e.Status))}
}

// failCode is an error answer with status, code and message.
func failCode(status int, code, format string, args ...any) simkit.Response {
	return simkit.JSON(status, apiError{Code: code, Message: fmt.Sprintf(format, args...)})
}

// fail is an error answer with the usual code for status.
func fail(status int, format string, args ...any) simkit.Response {
	return failCode(status, codeFor(status), format, args...)
}

// notFound is CloudAPI's 404 for a resource of kind (machine, package...).
func notFound(kind, id string) simkit.Response {
	return fail(http.StatusNotFound, "%s %s not found", kind, id)
}

// invalid is CloudAPI's 409 InvalidArgument.
func invalid(format string, args ...any) simkit.Response {
	return fail(http.StatusConflict, format, args...)
}

// validationFailed is the 409 ValidationFailed VMAPI's checks of tags and
// metadata answer with, through CloudAPI.
func validationFailed(format string, args ...any) simkit.Response {
	return failCode(http.StatusConflict, codeValidationFailed, format, args...)
}

// decode reads r's JSON body into v; an empty body leaves v as it is.
func decode(r *http.Request, v any) *simkit.Response {
	if r.ContentLength == 0 {
		return nil
	}
	if err := simkit.Decode(r, v); err != nil {
		if err.Error() == "the request body is empty" {
			return nil
		}
		resp := fail(http.StatusBadRequest, "%s", err.Error())
		return &resp
	}
	return nil
}

func ok(body any) simkit.Response      { return simkit.JSON(http.StatusOK, body) }
func created(body any) simkit.Response { return simkit.JSON(http.StatusCreated, body) }
func noContent() simkit.Response       { return simkit.NoContent(http.StatusNoContent) }
func accepted() simkit.Response        { return simkit.NoContent(http.StatusAccepted) }
