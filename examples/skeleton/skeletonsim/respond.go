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
	q := r.URL.Query()
	page, err := simkit.PositiveInt(q.Get("page"), 1)
	if err != nil {
		return nil, pageMeta{}, fmt.Errorf("page: %w", err)
	}
	if perPage, err = simkit.PositiveInt(q.Get("per_page"), perPage); err != nil {
		return nil, pageMeta{}, fmt.Errorf("per_page: %w", err)
	}
	perPage = min(perPage, MaxPerPage)
	meta := pageMeta{Page: page, PerPage: perPage, Total: len(items)}
	start := len(items)
	if page-1 < len(items)/perPage+1 { // no overflow for huge pages
		start = min((page-1)*perPage, len(items))
	}
	end := min(start+perPage, len(items))
	if end < len(items) {
		meta.NextPage = page + 1
	}
	return items[start:end], meta, nil
}
