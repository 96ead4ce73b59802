package tritonsim

import (
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

// apiErrors are CloudAPI's errors: a code for each status (InternalError
// for the others) and its messages for the failures the simulator
// injects.
var apiErrors = simkit.ErrorFormat{
	Codes: map[int]string{
		http.StatusBadRequest:         codeBadRequest,
		http.StatusUnauthorized:       codeInvalidCreds,
		http.StatusForbidden:          codeNotAuthorized,
		http.StatusNotFound:           codeNotFound,
		http.StatusGone:               codeNotFound,
		http.StatusConflict:           codeInvalidArgument,
		http.StatusTooManyRequests:    codeThrottled,
		http.StatusServiceUnavailable: codeUnavailable,
	},
	OtherCode: codeInternal,
	Messages: map[int]string{
		http.StatusNotFound:           "resource not found",
		http.StatusTooManyRequests:    "You have exceeded your request rate",
		http.StatusServiceUnavailable: "service unavailable",
	},
	Body: func(_ int, code, message string) any { return apiError{Code: code, Message: message} },
}

// failCode is an error answer with status, code and message.
func failCode(status int, code, format string, args ...any) simkit.Response {
	return apiErrors.ErrorCode(status, code, format, args...)
}

// fail is an error answer with the usual code for status.
func fail(status int, format string, args ...any) simkit.Response {
	return apiErrors.Error(status, format, args...)
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
	if err := simkit.DecodeOptional(r, v); err != nil {
		resp := fail(http.StatusBadRequest, "%s", err.Error())
		return &resp
	}
	return nil
}

func ok(body any) simkit.Response      { return simkit.JSON(http.StatusOK, body) }
func created(body any) simkit.Response { return simkit.JSON(http.StatusCreated, body) }
func noContent() simkit.Response       { return simkit.NoContent(http.StatusNoContent) }
func accepted() simkit.Response        { return simkit.NoContent(http.StatusAccepted) }
