package simkit

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// The clouds page their lists in three ways, each read here from a request
// for a list of n items: by page number (DigitalOcean's and Skeleton
// Cloud's ?page=&per_page=), by marker (OpenStack's ?marker=&limit= with
// next links, and Rancher's ?limit= with a pagination.next link whose
// marker the server chose), and by offset (Triton's ?offset=&limit=). Each
// says which items, [Start, End), the page holds; PageLink builds the
// links to other pages. The list's envelope (links.pages, *_links, a
// pagination object, a bare array) stays the simulator's.

// ErrUnknownMarker is the ParamError.Err of a marker no item has.
var ErrUnknownMarker = errors.New("no item has this marker")

// ParamError is a paging parameter the simulator refuses: a malformed
// number (its cloud answers 400) or an unknown marker (Neutron answers
// 404, Nova and Octavia 400).
type ParamError struct {
	// Param is the query parameter: "page", "per_page", "limit",
	// "marker" or "offset".
	Param string
	// Value is what the request gave.
	Value string
	Err   error
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Err.Error() }

func (e *ParamError) Unwrap() error { return e.Err }

// NumberPages configures PageByNumber.
type NumberPages struct {
	// Default is the page size when the request gives no per_page; Max
	// caps it (0: no cap).
	Default, Max int
}

// NumberedPage is one page of a list paged by number.
type NumberedPage struct {
	// Page is the page's number, from 1; PerPage its size.
	Page, PerPage int
	// Last is the number of the last page, at least 1 (an empty list has
	// one, empty, page).
	Last int
	// Start and End bound the page's items: items[Start:End]. A page past
	// the last one is empty.
	Start, End int
}

// PageByNumber reads ?page= (from 1) and ?per_page= for a list of n items.
// Both must be positive integers.
func PageByNumber(r *http.Request, n int, o NumberPages) (NumberedPage, error) {
	q := r.URL.Query()
	page, err := PositiveInt(q.Get("page"), 1)
	if err != nil {
		return NumberedPage{}, &ParamError{Param: "page", Value: q.Get("page"), Err: err}
	}
	perPage, err := PositiveInt(q.Get("per_page"), o.Default)
	if err != nil {
		return NumberedPage{}, &ParamError{Param: "per_page", Value: q.Get("per_page"), Err: err}
	}
	if o.Max > 0 {
		perPage = min(perPage, o.Max)
	}
	p := NumberedPage{Page: page, PerPage: perPage, Last: max((n+perPage-1)/perPage, 1), Start: n}
	if page <= p.Last { // no overflow for huge pages
		p.Start = min((page-1)*perPage, n)
	}
	p.End = min(p.Start+perPage, n)
	return p, nil
}

// Link is the absolute URL of page number page of the same list: the
// request's URL with page and per_page set, its other parameters kept.
func (p NumberedPage) Link(r *http.Request, page int) string {
	return PageLink(r, map[string]string{"page": strconv.Itoa(page), "per_page": strconv.Itoa(p.PerPage)})
}

// MarkerPages configures PageByMarker.
type MarkerPages struct {
	// Default is the limit when the request gives none, or 0; 0 means
	// every item. Max caps a limit (0: no cap).
	Default, Max int
}

// MarkerPage is one page of a list paged by marker.
type MarkerPage struct {
	// Limit is the page size, 0 for no limit.
	Limit int
	// Marker is the request's marker: the page starts after that item.
	Marker string
	// Start and End bound the page's items: items[Start:End].
	Start, End int
}

// PageByMarker reads ?limit= (a non-negative integer) and ?marker= (the
// ID of the last item seen, as id gives it) for items.
func PageByMarker[T any](r *http.Request, items []T, id func(T) string, o MarkerPages) (MarkerPage, error) {
	q := r.URL.Query()
	p := MarkerPage{Limit: o.Default, Marker: q.Get("marker")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return MarkerPage{}, &ParamError{Param: "limit", Value: v, Err: fmt.Errorf("want a non-negative integer, got %q", v)}
		}
		if n > 0 {
			p.Limit = n
		}
	}
	if o.Max > 0 && (p.Limit == 0 || p.Limit > o.Max) {
		p.Limit = o.Max
	}
	if p.Marker != "" {
		i := slices.IndexFunc(items, func(it T) bool { return id(it) == p.Marker })
		if i < 0 {
			return MarkerPage{}, &ParamError{Param: "marker", Value: p.Marker, Err: ErrUnknownMarker}
		}
		p.Start = i + 1
	}
	p.End = len(items)
	if p.Limit > 0 {
		p.End = min(p.Start+p.Limit, len(items))
	}
	return p, nil
}

// More reports whether items follow the page in a list of n.
func (p MarkerPage) More(n int) bool { return p.End < n }

// Full reports whether the page holds Limit items (Nova gives a full page
// a next link even when nothing follows).
func (p MarkerPage) Full() bool { return p.Limit > 0 && p.End-p.Start == p.Limit }

// OffsetPages configures PageByOffset.
type OffsetPages struct {
	// Default is the limit when the request gives none; Max caps it (0:
	// no cap).
	Default, Max int
}

// OffsetPage is one page of a list paged by offset.
type OffsetPage struct {
	// Offset is how many items the request skips; Limit the page size.
	Offset, Limit int
	// Start and End bound the page's items: items[Start:End].
	Start, End int
}

// PageByOffset reads ?offset= (a non-negative integer, default 0) and
// ?limit= (a positive integer) for a list of n items.
func PageByOffset(r *http.Request, n int, o OffsetPages) (OffsetPage, error) {
	q := r.URL.Query()
	var p OffsetPage
	if v := q.Get("offset"); v != "" {
		off, err := strconv.Atoi(v)
		if err != nil || off < 0 {
			return OffsetPage{}, &ParamError{Param: "offset", Value: v, Err: fmt.Errorf("want a non-negative integer, got %q", v)}
		}
		p.Offset = off
	}
	limit, err := PositiveInt(q.Get("limit"), o.Default)
	if err != nil {
		return OffsetPage{}, &ParamError{Param: "limit", Value: q.Get("limit"), Err: err}
	}
	if o.Max > 0 {
		limit = min(limit, o.Max)
	}
	p.Limit = limit
	p.Start = min(p.Offset, n)
	p.End = min(p.Start+limit, n)
	return p, nil
}

// PageLink is the absolute URL of another page of the list r asked for:
// r's URL with the query parameters of set set and those of del removed,
// the others (filters) kept.
func PageLink(r *http.Request, set map[string]string, del ...string) string {
	q := r.URL.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	for _, k := range del {
		q.Del(k)
	}
	u, _ := url.Parse(BaseURL(r))
	u.Path, u.RawQuery = r.URL.Path, q.Encode()
	return u.String()
}
