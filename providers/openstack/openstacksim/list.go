package openstacksim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// pageStyle is how a service pages its lists.
type pageStyle int

const (
	// novaPages: limit defaults to and is capped at MaxLimit; a full page
	// always has a next link (so the last page may be empty); an unknown
	// marker is 400.
	novaPages pageStyle = iota
	// neutronPages: no limit means everything and no links; a next link
	// only when more items follow; an unknown marker is 404.
	neutronPages
	// Octavia pages by its own rules: see octaviaPage.
)

// page is one page of a list: its items and its links (next, previous).
type page struct {
	items []map[string]any
	links []link
}

// paginate cuts items (already in the service's order, each with an "id")
// with the request's limit and marker. kind names the resource in errors.
func (s *Server) paginate(r *http.Request, items []map[string]any, style pageStyle, kind string) (page, *response) {
	var o simkit.MarkerPages // Neutron: no limit, no cap
	if style != neutronPages {
		o = simkit.MarkerPages{Default: s.opts.MaxLimit, Max: s.opts.MaxLimit}
	}
	mp, err := simkit.PageByMarker(r, items, itemID, o)
	if err != nil {
		var pe *simkit.ParamError
		errors.As(err, &pe)
		resp := s.listError(style, http.StatusBadRequest, "", fmt.Sprintf("limit must be a non-negative integer, got %q", pe.Value))
		if errors.Is(err, simkit.ErrUnknownMarker) {
			resp = s.listError(style, http.StatusNotFound, kind, pe.Value)
		}
		return page{}, &resp
	}
	p := page{items: items[mp.Start:mp.End]}
	if p.items == nil {
		p.items = []map[string]any{}
	}
	if mp.Limit == 0 || len(p.items) == 0 {
		return p, nil
	}
	if mp.More(len(items)) || style == novaPages && mp.Full() {
		p.links = append(p.links, link{Rel: "next", Href: pageURL(r, itemID(p.items[len(p.items)-1]), mp.Limit, false)})
	}
	if mp.Marker != "" && style == neutronPages {
		p.links = append(p.links, link{Rel: "previous", Href: pageURL(r, itemID(p.items[0]), mp.Limit, true)})
	}
	return p, nil
}

// itemID is a listed item's "id".
func itemID(m map[string]any) string {
	id, _ := m["id"].(string)
	return id
}

func (s *Server) listError(style pageStyle, status int, kind, detail string) response {
	switch {
	case status == http.StatusBadRequest && style == novaPages:
		return novaError(status, "%s", detail)
	case status == http.StatusBadRequest:
		return neutronBadRequest("%s", detail)
	case style == novaPages:
		return novaError(http.StatusBadRequest, "marker [%s] not found", detail)
	default:
		return neutronNotFound(kind, detail)
	}
}

// pageURL is the absolute URL of the page after (or, with reverse,
// before) marker, keeping the request's other parameters.
func pageURL(r *http.Request, marker string, limit int, reverse bool) string {
	set := map[string]string{"marker": marker, "limit": strconv.Itoa(limit)}
	if reverse {
		set["page_reverse"] = "True"
		return simkit.PageLink(r, set)
	}
	return simkit.PageLink(r, set, "page_reverse")
}

// listBody is {plural: items, plural_links: links}; links are left out
// when there are none.
func listBody(plural string, p page) map[string]any {
	body := map[string]any{plural: p.items}
	if len(p.links) > 0 {
		body[plural+"_links"] = p.links
	}
	return body
}

// toMap is v's JSON object as a map.
func toMap(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		panic(err)
	}
	return m
}

// reservedParams are list parameters that are not attribute filters.
var reservedParams = map[string]bool{
	"limit": true, "marker": true, "page_reverse": true, "sort_key": true, "sort_dir": true,
	"fields": true, "tags": true, "tags-any": true, "not-tags": true, "not-tags-any": true,
}

// filter keeps the items whose attributes match every query parameter
// (several values of one parameter: any of them), as Neutron and Octavia
// filter. special parameters are skipped (the caller handles them). With
// strict, an unknown attribute is an error, as Neutron's filter
// validation makes it.
func filter(q url.Values, items []map[string]any, strict bool, special ...string) ([]map[string]any, error) {
	var out []map[string]any
	for _, m := range items {
		keep := true
		for key, want := range q {
			if reservedParams[key] || slices.Contains(special, key) {
				continue
			}
			have, known := m[key]
			if !known {
				if strict {
					return nil, fmt.Errorf("[%s] is invalid attribute for filtering", key)
				}
				continue
			}
			if !slices.ContainsFunc(want, func(w string) bool { return valueMatches(have, w) }) {
				keep = false
				break
			}
		}
		if keep && tagsMatch(q, m["tags"]) {
			out = append(out, m)
		}
	}
	return out, nil
}

func valueMatches(have any, want string) bool {
	switch v := have.(type) {
	case nil:
		return want == "" || strings.EqualFold(want, "none") || strings.EqualFold(want, "null")
	case string:
		return v == want
	case bool:
		b, err := strconv.ParseBool(strings.ToLower(want))
		return err == nil && b == v
	case float64:
		n, err := strconv.ParseFloat(want, 64)
		return err == nil && n == v
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return valueMatches(x, want) })
	}
	return false
}

// tagsMatch applies the tags, tags-any, not-tags and not-tags-any filters
// (comma-separated lists).
func tagsMatch(q url.Values, tags any) bool {
	have := map[string]bool{}
	if list, ok := tags.([]any); ok {
		for _, t := range list {
			if s, ok := t.(string); ok {
				have[s] = true
			}
		}
	}
	split := func(key string) []string {
		var out []string
		for _, v := range q[key] {
			for t := range strings.SplitSeq(v, ",") {
				if t != "" {
					out = append(out, t)
				}
			}
		}
		return out
	}
	all := func(ts []string) bool { return !slices.ContainsFunc(ts, func(t string) bool { return !have[t] }) }
	anyOf := func(ts []string) bool { return slices.ContainsFunc(ts, func(t string) bool { return have[t] }) }
	if ts := split("tags"); len(ts) > 0 && !all(ts) {
		return false
	}
	if ts := split("tags-any"); len(ts) > 0 && !anyOf(ts) {
		return false
	}
	if ts := split("not-tags"); len(ts) > 0 && all(ts) {
		return false
	}
	if ts := split("not-tags-any"); len(ts) > 0 && anyOf(ts) {
		return false
	}
	return true
}

// project keeps only the fields= attributes of each item, as Neutron does.
func project(q url.Values, items []map[string]any) []map[string]any {
	fields := q["fields"]
	if len(fields) == 0 {
		return items
	}
	out := make([]map[string]any, len(items))
	for i, m := range items {
		p := map[string]any{}
		for _, f := range fields {
			if v, ok := m[f]; ok {
				p[f] = v
			}
		}
		out[i] = p
	}
	return out
}
