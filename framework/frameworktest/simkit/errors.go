package simkit

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
)

// ErrorFormat is how a cloud writes its errors: the error code (name,
// ID, type) it gives each status, the message of the answers it makes
// when something fails on its side (what an injected fault says), and
// its error body. A simulator keeps one and answers its errors with it:
//
//	var apiErrors = simkit.ErrorFormat{
//		Codes:     map[int]string{http.StatusNotFound: "ResourceNotFound"},
//		OtherCode: "InternalError",
//		Messages:  map[int]string{http.StatusNotFound: "resource not found"},
//		Body:      func(_ int, code, msg string) any { return apiError{Code: code, Message: msg} },
//	}
//	k := simkit.New(simkit.Options{ErrorBody: apiErrors.ErrorBody, ...})
//	return apiErrors.Error(http.StatusConflict, "machine %s is %s", id, state)
type ErrorFormat struct {
	// Codes are the cloud's error codes by status.
	Codes map[int]string
	// OtherCode is the code of the statuses Codes leaves out; "" means
	// the status text in snake case ("service_unavailable").
	OtherCode string
	// Messages are the messages of injected faults by status.
	Messages map[int]string
	// OtherMessage is the message of the injected faults whose status
	// Messages leaves out; "" means DefaultMessage.
	OtherMessage string
	// Body builds the error body of an answer with status.
	Body func(status int, code, message string) any
}

// Code is the error code of status.
func (f ErrorFormat) Code(status int) string {
	if code := f.Codes[status]; code != "" {
		return code
	}
	if f.OtherCode != "" {
		return f.OtherCode
	}
	return strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
}

// Message is the message of an injected fault with status.
func (f ErrorFormat) Message(status int) string {
	if msg := f.Messages[status]; msg != "" {
		return msg
	}
	return cmp.Or(f.OtherMessage, DefaultMessage(status))
}

// ErrorBody is the body of the errors the Kit answers itself (injected
// faults, oversized bodies), for Options.ErrorBody: the fault's code and
// message, or the ones of its status.
func (f ErrorFormat) ErrorBody(_ *http.Request, e ErrorInfo) any {
	return f.Body(e.Status, cmp.Or(e.Code, f.Code(e.Status)), cmp.Or(e.Message, f.Message(e.Status)))
}

// Error is an answer with status, its code and the formatted message.
func (f ErrorFormat) Error(status int, format string, args ...any) Response {
	return f.ErrorCode(status, f.Code(status), format, args...)
}

// ErrorCode is an answer with status, code and the formatted message.
func (f ErrorFormat) ErrorCode(status int, code, format string, args ...any) Response {
	return JSON(status, f.Body(status, code, fmt.Sprintf(format, args...)))
}
