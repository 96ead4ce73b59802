package skeletonsim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every error response.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var errorCodes = map[int]string{
	http.StatusBadRequest:          "bad_request",
	http.StatusUnauthorized:        "unauthorized",
	http.StatusForbidden:           "forbidden",
	http.StatusNotFound:            "not_found",
	http.StatusConflict:            "conflict",
	http.StatusUnprocessableEntity: "unprocessable_entity",
	http.StatusTooManyRequests:     "rate_limited",
	http.StatusInternalServerError: "internal_error",
	http.StatusServiceUnavailable:  "service_unavailable",
}

func errorBody(status int, message string) apiError {
	var e apiError
	e.Error.Code = errorCodes[status]
	if e.Error.Code == "" {
		e.Error.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	e.Error.Message = message
	return e
}

// fail returns an error response for a handlerFunc.
func fail(status int, format string, args ...any) (int, any) {
	return status, errorBody(status, fmt.Sprintf(format, args...))
}

// pageMeta is the "meta" object of every list response.
type pageMeta struct {
	Page     int `json:"page"`
	PerPage  int `json:"per_page"`
	Total    int `json:"total"`
	NextPage int `json:"next_page"`
}

// paginate returns the page of items that r asks for with ?page= (from 1)
// and ?per_page= (capped at MaxPerPage).
func paginate[T any](r *http.Request, items []T, perPage int) ([]T, pageMeta, error) {
	p, err := simkit.PageByNumber(r, len(items), simkit.NumberPages{Default: perPage, Max: MaxPerPage})
	if err != nil {
		return nil, pageMeta{}, err
	}
	meta := pageMeta{Page: p.Page, PerPage: p.PerPage, Total: len(items)}
	if p.End < len(items) {
		meta.NextPage = p.Page + 1
	}
	return items[p.Start:p.End], meta, nil
}
