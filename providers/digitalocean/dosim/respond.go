package dosim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// apiError is the body of every error response.
type apiError struct {
	ID        string `json:"id"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// Error IDs and messages as the real API sends them.
const (
	msgNotFound     = "The resource you were accessing could not be found."
	msgRateLimited  = "API Rate limit exceeded."
	msgUnauthorized = "Unable to authenticate you."
)

// apiErrors are DigitalOcean's errors: an ID for each status ("error"
// for the others) and the API's messages for the failures the simulator
// injects.
var apiErrors = simkit.ErrorFormat{
	Codes: map[int]string{
		http.StatusBadRequest:          "bad_request",
		http.StatusUnauthorized:        "unauthorized",
		http.StatusForbidden:           "forbidden",
		http.StatusNotFound:            "not_found",
		http.StatusConflict:            "conflict",
		http.StatusUnprocessableEntity: "unprocessable_entity",
		http.StatusTooManyRequests:     "too_many_requests",
		http.StatusInternalServerError: "server_error",
		http.StatusServiceUnavailable:  "service_unavailable",
	},
	OtherCode: "error",
	Messages: map[int]string{
		http.StatusTooManyRequests: msgRateLimited,
		http.StatusUnauthorized:    msgUnauthorized,
		http.StatusNotFound:        msgNotFound,
	},
	Body: func(_ int, id, message string) any { return apiError{ID: id, Message: message} },
}

// fail returns an error response for a handlerFunc; respond adds the
// request ID.
func fail(status int, format string, args ...any) (int, any) {
	resp := apiErrors.Error(status, format, args...)
	return resp.Status, resp.Body
}

func notFound() (int, any) { return fail(http.StatusNotFound, msgNotFound) }

func unprocessable(format string, args ...any) (int, any) {
	return fail(http.StatusUnprocessableEntity, format, args...)
}

// badJSON answers a body simkit.Decode fails on.
func badJSON(err error) (int, any) { return fail(http.StatusBadRequest, "%s", err.Error()) }

// Links is the "links" object of a list response.
type Links struct {
	Pages *Pages `json:"pages,omitempty"`
}

// Pages are absolute URLs of the other pages of a list.
type Pages struct {
	First string `json:"first,omitempty"`
	Prev  string `json:"prev,omitempty"`
	Next  string `json:"next,omitempty"`
	Last  string `json:"last,omitempty"`
}

// Meta is the "meta" object of a list response.
type Meta struct {
	Total int `json:"total"`
}

// page is one page of a list: the items plus links and meta.
type page[T any] struct {
	items []T
	links Links
	meta  Meta
}

// paginate returns the page of items that r asks for with ?page= (from 1)
// and ?per_page= (at most MaxPerPage), with links built from r's own URL so
// that other query parameters (filters) carry over.
func paginate[T any](r *http.Request, items []T, defPerPage int) (page[T], error) {
	p, err := simkit.PageByNumber(r, len(items), simkit.NumberPages{Default: defPerPage, Max: MaxPerPage})
	if err != nil {
		return page[T]{}, err
	}
	out := page[T]{items: items[p.Start:p.End], meta: Meta{Total: len(items)}}
	if out.items == nil {
		out.items = []T{}
	}
	var links Pages
	if p.Page > 1 {
		links.First = p.Link(r, 1)
		links.Prev = p.Link(r, min(p.Page-1, p.Last))
	}
	if p.Page < p.Last {
		links.Next = p.Link(r, p.Page+1)
		links.Last = p.Link(r, p.Last)
	}
	if links != (Pages{}) {
		out.links.Pages = &links
	}
	return out, nil
}

// listBody is the response of a list endpoint: items under key.
func listBody[T any](key string, p page[T]) map[string]any {
	return map[string]any{key: p.items, "links": p.links, "meta": p.meta}
}

// list paginates items and answers with them under key.
func list[T any](r *http.Request, key string, items []T, defPerPage int) (int, any) {
	p, err := paginate(r, items, defPerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%s", err.Error())
	}
	return http.StatusOK, listBody(key, p)
}

// listClones is list over stored records: only the page's are cloned, so a
// list of 5,000 droplets read in 25 pages copies each droplet once, not 25
// times.
func listClones[T any](r *http.Request, key string, items []*T, defPerPage int, clone func(*T) T) (int, any) {
	p, err := paginate(r, items, defPerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%s", err.Error())
	}
	out := page[T]{items: make([]T, len(p.items)), links: p.links, meta: p.meta}
	for i, it := range p.items {
		out.items[i] = clone(it)
	}
	return http.StatusOK, listBody(key, out)
}
