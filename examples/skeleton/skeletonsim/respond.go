package skeletonsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every error response.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// apiErrors are Skeleton Cloud's errors: a code for each status (the
// status text in snake case for the others) and "injected fault" for the
// failures the simulator injects.
var apiErrors = simkit.ErrorFormat{
	Codes: map[int]string{
		http.StatusTooManyRequests:     "rate_limited",
		http.StatusInternalServerError: "internal_error",
	},
	OtherMessage: "injected fault",
	Body: func(_ int, code, message string) any {
		var e apiError
		e.Error.Code, e.Error.Message = code, message
		return e
	},
}

// fail returns an error response for a handlerFunc.
func fail(status int, format string, args ...any) (int, any) {
	resp := apiErrors.Error(status, format, args...)
	return resp.Status, resp.Body
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
