package ranchersim

import (
	"fmt"
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every Cattle error (gdapi's error resource):
// go-rancher's newApiError turns its keys other than id, links, actions,
// type and status into ApiError.Body ("code=NotFound, message=...").
type apiError struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	BaseType  string            `json:"baseType"`
	Links     map[string]string `json:"links"`
	Actions   map[string]string `json:"actions"`
	Status    int               `json:"status"`
	Code      string            `json:"code"`
	Message   *string           `json:"message"`
	Detail    *string           `json:"detail"`
	FieldName string            `json:"fieldName,omitempty"`
}

// Error codes: gdapi's ResponseCodes names for the statuses, and its
// ValidationErrorCodes for the 422s a request's fields get.
const (
	codeBadRequest       = "BadRequest"
	codeUnauthorized     = "Unauthorized"
	codeForbidden        = "Forbidden"
	codeNotFound         = "NotFound"
	codeMethodNotAllowed = "MethodNotAllowed"
	codeConflict         = "Conflict"
	codeTooLarge         = "RequestEntityTooLarge"
	codeTooManyRequests  = "TooManyRequests"
	codeServerError      = "InternalServerError"
	codeUnavailable      = "ServiceUnavailable"

	codeMissingRequired   = "MissingRequired"
	codeInvalidReference  = "InvalidReference"
	codeNotUnique         = "NotUnique"
	codeInvalidOption     = "InvalidOption"
	codeInvalidFormat     = "InvalidFormat"
	codeInvalidCharacters = "InvalidCharacters"
	codeMaxLength         = "MaxLengthExceeded"
	codeMinLimit          = "MinLimitExceeded"
	codeMaxLimit          = "MaxLimitExceeded"
	codeInvalidAction     = "InvalidAction"
	codeActionNotAvail    = "ActionNotAvailable"
	codeInvalidState      = "InvalidState"
)

// errorDoc is an error body; an empty message is null, as gdapi writes
// validation errors.
func errorDoc(status int, code, field, msg string) apiError {
	e := apiError{
		ID: fmt.Sprintf("%d-%s", status, code), Type: "error", BaseType: "error",
		Links: map[string]string{}, Actions: map[string]string{},
		Status: status, Code: code, FieldName: field,
	}
	if msg != "" {
		e.Message = &msg
	}
	return e
}

// apiErrors are Cattle's errors: gdapi's code for each status
// (InternalServerError for the others) and Cattle's messages for the
// failures the simulator injects.
var apiErrors = simkit.ErrorFormat{
	Codes: map[int]string{
		http.StatusBadRequest:            codeBadRequest,
		http.StatusUnauthorized:          codeUnauthorized,
		http.StatusForbidden:             codeForbidden,
		http.StatusNotFound:              codeNotFound,
		http.StatusMethodNotAllowed:      codeMethodNotAllowed,
		http.StatusConflict:              codeConflict,
		http.StatusRequestEntityTooLarge: codeTooLarge,
		http.StatusTooManyRequests:       codeTooManyRequests,
		http.StatusServiceUnavailable:    codeUnavailable,
	},
	OtherCode: codeServerError,
	Messages: map[int]string{
		http.StatusNotFound:           "Not Found",
		http.StatusServiceUnavailable: "Service Unavailable",
	},
	Body: func(status int, code, message string) any { return errorDoc(status, code, "", message) },
}

// fail is an error answer with the usual code for status.
func fail(status int, format string, args ...any) simkit.Response {
	return apiErrors.Error(status, format, args...)
}

// notFound is Cattle's 404 for an unknown ID, type or path.
func notFound() simkit.Response {
	return simkit.JSON(http.StatusNotFound, errorDoc(http.StatusNotFound, codeNotFound, "", "Not Found"))
}

// invalid is a 422 validation error: code (MissingRequired,
// InvalidReference, NotUnique...) about field, as gdapi's
// ValidationHandler answers.
func invalid(code, field string) simkit.Response {
	return simkit.JSON(http.StatusUnprocessableEntity, errorDoc(http.StatusUnprocessableEntity, code, field, ""))
}

// decode reads r's JSON body into v; an empty body leaves v as it is (go-
// rancher posts actions without input with no body).
func decode(r *http.Request, v any) *simkit.Response {
	if err := simkit.DecodeOptional(r, v); err != nil {
		resp := simkit.JSON(http.StatusBadRequest, errorDoc(http.StatusBadRequest, codeInvalidFormat, "", err.Error()))
		return &resp
	}
	return nil
}

func ok(body any) simkit.Response      { return simkit.JSON(http.StatusOK, body) }
func created(body any) simkit.Response { return simkit.JSON(http.StatusCreated, body) }
func accepted(body any) simkit.Response {
	return simkit.JSON(http.StatusAccepted, body)
}
