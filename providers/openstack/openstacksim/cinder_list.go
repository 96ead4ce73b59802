package openstacksim

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cinder's lists (cinder/api/common.py): limit (default and cap
// Options.MaxLimit, osapi_max_limit; not an integer or negative: 400),
// offset, and marker (the ID of the last item seen; unknown: 404 as the
// resource's lookup answers); a next link whenever the page is full
// (limit <= its length), so a client reads an empty last page; sort as
// key[:dir],… or the deprecated sort_key/sort_dir (not both: 400),
// newest first by default.

// cinderListParams are the query parameters that are not filters.
var cinderListParams = []string{"limit", "marker", "offset", "sort", "sort_key", "sort_dir", "with_count"}

// cinderFilters checks a list's filters as Cinder does for a member:
// from 3.31 a filter not in resource_filters.json is 400 (all_tenants,
// which cinderclient always sends, is ignored); before, it is dropped
// unless it is one of old.
func cinderFilters(q url.Values, minor int, allowed, old []string) (url.Values, *response) {
	out := url.Values{}
	var invalid []string
	for k, v := range q {
		switch {
		case slices.Contains(cinderListParams, k) || k == "all_tenants":
		case minor >= 31 && !slices.Contains(allowed, k):
			invalid = append(invalid, k)
		case minor >= 31 || slices.Contains(old, k):
			out[k] = v
		}
	}
	if len(invalid) > 0 {
		slices.Sort(invalid)
		resp := cinderError(http.StatusBadRequest, "Invalid filters %s are found in query options.", strings.Join(invalid, ","))
		return nil, &resp
	}
	return out, nil
}

// cinderMatch reports whether item (a resource's detailed view) passes
// every filter: metadata as Cinder's dict literal
// ({'key': 'value', …}, what gophercloud and cinderclient send), the
// others by equality with the attribute of that name (name matches the
// display name).
func cinderMatch(filters url.Values, item map[string]any) bool {
	for k, vs := range filters {
		want := vs[len(vs)-1]
		if k == "metadata" {
			md, _ := item["metadata"].(map[string]string)
			for mk, mv := range parseDictLiteral(want) {
				if md[mk] != mv {
					return false
				}
			}
			continue
		}
		if k == "bootable" { // a boolean as Cinder parses one
			b, err := strconv.ParseBool(strings.ToLower(want))
			if err != nil || item[k] != strconv.FormatBool(b) {
				return false
			}
			continue
		}
		if !valueMatches(jsonValue(item[k]), want) {
			return false
		}
	}
	return true
}

// jsonValue is v as decoded JSON would hold it (numbers as float64), for
// valueMatches.
func jsonValue(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case string, bool, nil, float64:
		return x
	}
	return fmt.Sprint(v)
}

// parseDictLiteral reads a Python dict literal of strings,
// "{'k1': 'v1', 'k2': 'v2'}" (quotes optional).
func parseDictLiteral(s string) map[string]string {
	out := map[string]string{}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		unquote := func(x string) string { return strings.Trim(strings.TrimSpace(x), `'"`) }
		out[unquote(k)] = unquote(v)
	}
	return out
}

// cinderSort orders items (the newest first, each a detailed view with
// "id") by the request's sort keys among keys; created_at and id are the
// creation order. An unknown key is 400.
func cinderSort(q url.Values, items []map[string]any, keys []string) *response {
	bad := func(msg string) *response { r := cinderError(http.StatusBadRequest, "%s", msg); return &r }
	if q.Has("sort") && (q.Has("sort_key") || q.Has("sort_dir")) {
		return bad("The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.")
	}
	type sortKey struct {
		key  string
		desc bool
	}
	var sk []sortKey
	if v := q.Get("sort"); v != "" {
		for part := range strings.SplitSeq(v, ",") {
			k, dir, _ := strings.Cut(part, ":")
			sk = append(sk, sortKey{strings.TrimSpace(k), strings.TrimSpace(dir) != "asc"})
		}
	} else if q.Has("sort_key") || q.Has("sort_dir") {
		sk = append(sk, sortKey{cmpOr(q.Get("sort_key"), "created_at"), q.Get("sort_dir") != "asc"})
	}
	order := map[string]int{}
	for i, m := range items {
		order[itemID(m)] = len(items) - i // creation order
	}
	for _, k := range sk {
		if k.key != "created_at" && k.key != "id" && !slices.Contains(keys, k.key) {
			return bad("Invalid input received: Invalid sort key")
		}
	}
	if len(sk) == 0 {
		return nil
	}
	slices.SortStableFunc(items, func(a, b map[string]any) int {
		for _, k := range sk {
			var c int
			if k.key == "created_at" || k.key == "id" {
				c = cmp.Compare(order[itemID(a)], order[itemID(b)])
			} else {
				c = cmp.Compare(fmt.Sprint(a[k.key]), fmt.Sprint(b[k.key]))
				if x, ok := a[k.key].(int); ok {
					y, _ := b[k.key].(int)
					c = cmp.Compare(x, y)
				}
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return nil
}

// cinderPage cuts a page of items (sorted, each with an "id") as Cinder
// does; kind names the resource in a marker's 404.
func (s *Server) cinderPage(r *http.Request, items []map[string]any, kind string) (page, *response) {
	q := r.URL.Query()
	bad := func(format string, args ...any) (page, *response) {
		resp := cinderError(http.StatusBadRequest, format, args...)
		return page{}, &resp
	}
	limit := s.opts.MaxLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return bad("limit param must be an integer")
		case n < 0:
			return bad("limit param must be positive")
		}
		limit = min(n, s.opts.MaxLimit)
	}
	offset := 0
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return bad("Invalid input received: offset must be an integer.")
		case n < 0:
			return bad("Invalid input received: offset must be >= 0.")
		}
		offset = n
	}
	start := 0
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(items, func(it map[string]any) bool { return itemID(it) == m })
		if i < 0 {
			resp := cinderError(http.StatusNotFound, "%s %s could not be found.", kind, m)
			return page{}, &resp
		}
		start = i + 1
	}
	start = min(start+offset, len(items))
	end := min(start+limit, len(items))
	p := page{items: slices.Clone(items[start:end])}
	if p.items == nil {
		p.items = []map[string]any{}
	}
	if len(p.items) > 0 && limit <= len(p.items) {
		last := itemID(p.items[len(p.items)-1])
		p.links = []link{{Rel: "next", Href: simkit.PageLink(r, map[string]string{"marker": last}, "offset")}}
	}
	return p, nil
}
