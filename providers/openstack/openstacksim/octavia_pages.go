package openstacksim

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Octavia pages its lists with its own PaginationHelper
// (octavia/api/common/pagination.py), whose rules differ from Nova's and
// Neutron's:
//
//   - limit: none means pagination_max_limit (Options.MaxLimit), a larger
//     one is capped to it, and a limit below 1 (or "infinite") means no
//     limit at all; a limit that is not an integer is 400 InvalidLimit.
//   - marker: the ID of an item (an item a filter leaves out included),
//     the page starting after it in the list's order (created_at, id);
//     with page_reverse=True, the first items before it, in the same
//     order. An ID nothing has is 400 InvalidMarker.
//   - links (<plural>_links, always there, [] when none): none for an
//     empty page. Otherwise "previous" when the request had a marker (its
//     marker the page's first item, page_reverse=True), then "next" when
//     the page is full, len(page) >= limit, or there is no limit — whether
//     or not anything follows, so a client reads an empty last page. Both
//     are the request's path with limit (the string None when there is no
//     limit), sort and sort_key only, not the request's filters.

// octaviaPage cuts the page a request asks for out of items, the ones its
// filters keep, in order; all is the unfiltered list in the same order,
// in which a marker is looked up.
func (s *Server) octaviaPage(r *http.Request, all, items []map[string]any) (page, *response) {
	q := r.URL.Query()
	limit := s.opts.MaxLimit // 0: none
	if v, given := q["limit"]; given {
		n, err := strconv.Atoi(strings.TrimSpace(v[0]))
		switch {
		case strings.TrimSpace(v[0]) == "infinite":
			limit = 0
		case err != nil:
			resp := octaviaError(http.StatusBadRequest, "Supplied pagination limit '%s' is not valid.", v[0])
			return page{}, &resp
		case n < 1:
			limit = 0
		default:
			limit = min(n, s.opts.MaxLimit)
		}
	}
	marker := q.Get("marker")
	p := page{items: items, links: []link{}}
	if marker != "" {
		pos := make(map[string]int, len(all))
		for i, m := range all {
			pos[itemID(m)] = i
		}
		at, known := pos[marker]
		if !known {
			resp := octaviaError(http.StatusBadRequest, "Supplied pagination marker '%s' is not valid.", marker)
			return page{}, &resp
		}
		reverse := q.Get("page_reverse") == "True"
		p.items = nil
		for _, m := range items {
			if i := pos[itemID(m)]; reverse && i < at || !reverse && i > at {
				p.items = append(p.items, m)
			}
		}
	}
	if limit > 0 && len(p.items) > limit {
		p.items = p.items[:limit]
	}
	if p.items == nil {
		p.items = []map[string]any{}
	}
	if len(p.items) == 0 {
		return p, nil
	}
	base := []string{"limit=None"}
	if limit > 0 {
		base[0] = "limit=" + strconv.Itoa(limit)
	}
	for _, key := range []string{"sort", "sort_key"} {
		if v := q.Get(key); v != "" {
			base = append(base, key+"="+url.QueryEscape(v))
		}
	}
	href := simkit.BaseURL(r) + octaviaRequestPath(r) + "?"
	if marker != "" {
		attrs := append(append([]string{}, base...), "marker="+itemID(p.items[0]), "page_reverse=True")
		p.links = append(p.links, link{Rel: "previous", Href: href + strings.Join(attrs, "&")})
	}
	if limit == 0 || len(p.items) >= limit {
		attrs := append(append([]string{}, base...), "marker="+itemID(p.items[len(p.items)-1]))
		p.links = append(p.links, link{Rel: "next", Href: href + strings.Join(attrs, "&")})
	}
	return p, nil
}

// octaviaListBody is {plural: items, plural_links: links}, links always
// there, as Octavia's list answers are.
func octaviaListBody(plural string, p page) map[string]any {
	return map[string]any{plural: p.items, plural + "_links": p.links}
}

// origPathKey is the context key under which the /v2 alias keeps the path
// the client asked for.
type origPathKey struct{}

// withOrigPath returns the context of a request rewritten from path.
func withOrigPath(ctx context.Context, path string) context.Context {
	return context.WithValue(ctx, origPathKey{}, path)
}

// octaviaRequestPath is the path the client asked for (/load-balancer/v2/…
// or /load-balancer/v2.0/…), which Octavia's links repeat.
func octaviaRequestPath(r *http.Request) string {
	if p, ok := r.Context().Value(origPathKey{}).(string); ok {
		return p
	}
	return r.URL.Path
}
