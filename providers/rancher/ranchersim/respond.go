package ranchersim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every Cattle error (gdapi's error resource):
// go-rancher's newApiError turns its keys other than id, links, actions,
// type and status into ApiError.Body ("code=Not Found, message=...").
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

// Error codes. An error Cattle raises with a status only (404, 405,
// 409, 401...) gets its code from the status's line in api/
// messages.properties, which Cattle loads as the ExceptionHandler's
// standard error codes, and the same text as its message (Cattle v0.183,
// code/packaging/app-config/.../IaasApiConfig.java ExceptionHandler,
// gdapi's ExceptionHandler.populateError): {"status":404,"code":"Not
// Found","message":"Not Found"}. A status the file lacks (429) has the
// status as its code. Validation errors carry gdapi's
// ValidationErrorCodes and the field.
const (
	codeBadRequest       = "Bad Request"
	codeUnauthorized     = "Unauthorized"
	codeForbidden        = "Forbidden"
	codeNotFound         = "Not Found"
	codeMethodNotAllowed = "Method not allowed"
	codeConflict         = "Conflict"
	codeTooLarge         = "Request Entity Too Long"
	codeUnprocessable    = "Unprocessable Entity"
	codeTooManyRequests  = "429"
	codeServerError      = "Internal Server Error"
	codeUnavailable      = "Service Unavailable"

	// codeInvalidBodyContent is BodyParserRequestHandler's 400 for a body
	// that is not JSON.
	codeInvalidBodyContent = "InvalidBodyContent"

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
		ID: fmt.Sprintf("%d-%s", status, strings.ReplaceAll(code, " ", "")), Type: "error", BaseType: "error",
		Links: map[string]string{}, Actions: map[string]string{},
		Status: status, Code: code, FieldName: field,
	}
	if msg != "" {
		e.Message = &msg
	}
	return e
}

// statusCodes are Cattle's codes (and default messages) of the errors it
// raises with a status only: api/messages.properties.
var statusCodes = map[int]string{
	http.StatusBadRequest:            codeBadRequest,
	http.StatusUnauthorized:          codeUnauthorized,
	http.StatusForbidden:             codeForbidden,
	http.StatusNotFound:              codeNotFound,
	http.StatusMethodNotAllowed:      codeMethodNotAllowed,
	http.StatusConflict:              codeConflict,
	http.StatusRequestEntityTooLarge: codeTooLarge,
	http.StatusUnprocessableEntity:   codeUnprocessable,
	http.StatusTooManyRequests:       codeTooManyRequests,
	http.StatusServiceUnavailable:    codeUnavailable,
}

// apiErrors are Cattle's errors: its code for each status
// (InternalServerError for the others) and, as Cattle writes them, the
// same text as the message of the failures the simulator injects.
var apiErrors = simkit.ErrorFormat{
	Codes:     statusCodes,
	OtherCode: codeServerError,
	Messages:  statusCodes,
	Body:      func(status int, code, message string) any { return errorDoc(status, code, "", message) },
}

// fail is an error answer with the usual code for status.
func fail(status int, format string, args ...any) simkit.Response {
	return apiErrors.Error(status, format, args...)
}

// notFound is Cattle's 404 for an unknown ID, type or path.
func notFound() simkit.Response { return statusError(http.StatusNotFound) }

// methodNotAllowed is Cattle's 405 for a method the type's schema does
// not list (ValidationHandler.validateMethod).
func methodNotAllowed() simkit.Response { return statusError(http.StatusMethodNotAllowed) }

// statusError is an error Cattle raises with a status only: its code and
// message are the status's line of messages.properties.
func statusError(status int) simkit.Response {
	code := cmp.Or(statusCodes[status], codeServerError)
	return simkit.JSON(status, errorDoc(status, code, "", code))
}

// invalid is a 422 validation error: code (MissingRequired,
// InvalidReference, NotUnique...) about field, as gdapi's
// ValidationHandler answers.
func invalid(code, field string) simkit.Response {
	return simkit.JSON(http.StatusUnprocessableEntity, errorDoc(http.StatusUnprocessableEntity, code, field, ""))
}

// decode reads r's JSON body into v; an empty body leaves v as it is (go-
// rancher posts actions without input with no body), and so does JSON
// that is not an object or a list, which Cattle's body parser drops. A
// body that is not JSON is 400 InvalidBodyContent; a field of the wrong
// type, 422 InvalidFormat about the field, as Cattle's validation
// answers it.
func decode(r *http.Request, v any) *simkit.Response {
	data, err := io.ReadAll(r.Body)
	if err != nil || !json.Valid(data) && len(bytes.TrimSpace(data)) > 0 {
		resp := invalidBody()
		return &resp
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' && data[0] != '[' {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			resp := invalid(codeInvalidFormat, te.Field[strings.LastIndex(te.Field, ".")+1:])
			return &resp
		}
		resp := invalidBody()
		return &resp
	}
	return nil
}

// invalidBody is Cattle's answer to a body that is not JSON
// (BodyParserRequestHandler): 400, code and message InvalidBodyContent.
func invalidBody() simkit.Response {
	return simkit.JSON(http.StatusBadRequest,
		errorDoc(http.StatusBadRequest, codeInvalidBodyContent, "", codeInvalidBodyContent))
}

func ok(body any) simkit.Response      { return simkit.JSON(http.StatusOK, body) }
func created(body any) simkit.Response { return simkit.JSON(http.StatusCreated, body) }
func accepted(body any) simkit.Response {
	return simkit.JSON(http.StatusAccepted, body)
}
