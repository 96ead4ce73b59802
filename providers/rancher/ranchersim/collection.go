package ranchersim

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// view builds a request's documents: every link and action is an absolute
// URL back to the simulator, as the request reached it.
type view struct {
	base    string // http://127.0.0.1:41234
	project string // http://127.0.0.1:41234/v2-beta/projects/1a5
	// include holds the links the request named in ?include= (repeated,
	// or comma-separated): a resource whose schema lists one of them in
	// includeableLinks embeds what the link answers. Other names are
	// ignored, as the API spec says.
	include map[string]bool
}

func (s *Server) view(r *http.Request) view {
	base := simkit.BaseURL(r)
	v := view{base: base, project: s.ProjectURL(base), include: map[string]bool{}}
	for _, vals := range r.URL.Query()["include"] {
		for name := range strings.SplitSeq(vals, ",") {
			if name = strings.TrimSpace(name); name != "" {
				v.include[name] = true
			}
		}
	}
	return v
}

// includes reports whether the request asked for the link named link of a
// resource of type typ embedded, and the type's schema offers it.
func (v view) includes(typ, link string) bool {
	return v.include[link] && slices.Contains(mustSchema(typ).includeable, link)
}

// self is a resource's URL: <project>/<collection>/<id>.
func (v view) self(collection, id string) string { return v.project + "/" + collection + "/" + id }

// actions maps each name to its action URL on the resource at self.
func actions(self string, names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = self + "?action=" + n
	}
	return m
}

// resource is what every Cattle document starts with.
type resource struct {
	ID       string            `json:"id"`
	Type     string            `json:"type"`
	BaseType string            `json:"baseType"`
	Links    map[string]string `json:"links"`
	Actions  map[string]string `json:"actions"`
}

// pagination is a collection's paging, as go-rancher's Pagination reads
// it; Next follows it.
type pagination struct {
	First    *string `json:"first"`
	Previous *string `json:"previous"`
	Next     *string `json:"next"`
	Limit    int     `json:"limit"`
	Total    *int    `json:"total"`
	Partial  bool    `json:"partial"`
}

// condition is one of a collection's filters as the answer echoes it.
type condition struct {
	Modifier string `json:"modifier"`
	Value    any    `json:"value"`
}

// collection is a list answer.
type collection struct {
	Type           string                 `json:"type"`
	ResourceType   string                 `json:"resourceType"`
	Links          map[string]string      `json:"links"`
	CreateTypes    map[string]string      `json:"createTypes"`
	Actions        map[string]string      `json:"actions"`
	Data           []any                  `json:"data"`
	SortLinks      map[string]string      `json:"sortLinks"`
	Pagination     *pagination            `json:"pagination"`
	Sort           any                    `json:"sort"`
	Filters        map[string][]condition `json:"filters"`
	CreateDefaults map[string]any         `json:"createDefaults"`
}

// Paging of lists: Cattle's default page size, and the most a request
// may ask for.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// modifiers are the filter modifiers Cattle accepts after a field name
// and an underscore (name_ne, removed_null...); none means eq.
var modifiers = []string{"eq", "ne", "lt", "lte", "gt", "gte", "prefix", "like", "notlike", "null", "notnull"}

// filter is one condition of a list request: field, modifier, values
// (several values of one key match any).
type filter struct {
	field, modifier string
	values          []string
}

// pagingParams are the query parameters that are not filters.
var pagingParams = []string{"limit", "marker", "sort", "order", "include"}

// parseFilters reads a list request's filters on the fields the type
// filters by: "name=x", "name_ne=x", "removed_null=1"; a field may be
// written in snake case (external_id, as the old CCM sends it). Keys
// that name no filterable field are ignored.
func parseFilters(r *http.Request, fields []string) []filter {
	var out []filter
	for key, vals := range r.URL.Query() {
		if slices.Contains(pagingParams, key) {
			continue
		}
		if f, ok := filterField(key, fields); ok {
			out = append(out, filter{field: f, modifier: "eq", values: vals})
			continue
		}
		i := strings.LastIndex(key, "_")
		if i < 0 || !slices.Contains(modifiers, key[i+1:]) {
			continue
		}
		if f, ok := filterField(key[:i], fields); ok {
			out = append(out, filter{field: f, modifier: key[i+1:], values: vals})
		}
	}
	slices.SortFunc(out, func(a, b filter) int { return strings.Compare(a.field+a.modifier, b.field+b.modifier) })
	return out
}

// filterField resolves a query key to a filterable field, camel case.
func filterField(key string, fields []string) (string, bool) {
	if slices.Contains(fields, key) {
		return key, true
	}
	camel := snakeToCamel(key)
	return camel, slices.Contains(fields, camel)
}

func snakeToCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// matches reports whether doc (a resource as JSON fields) passes every
// filter.
func matches(doc map[string]any, filters []filter) bool {
	for _, f := range filters {
		if !f.matches(doc[f.field]) {
			return false
		}
	}
	return true
}

func (f filter) matches(v any) bool {
	s, isNull := scalar(v)
	switch f.modifier {
	case "null":
		return isNull
	case "notnull":
		return !isNull
	case "ne":
		return isNull || !slices.Contains(f.values, s)
	}
	if isNull {
		return false
	}
	return slices.ContainsFunc(f.values, func(want string) bool {
		switch f.modifier {
		case "prefix":
			return strings.HasPrefix(s, want)
		case "like":
			return like(want).MatchString(s)
		case "notlike":
			return !like(want).MatchString(s)
		case "lt", "lte", "gt", "gte":
			return compare(s, want, f.modifier)
		default:
			return s == want
		}
	})
}

// scalar is a field's value as a filter compares it; null (and "") is
// isNull.
func scalar(v any) (s string, isNull bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, v == ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), false
	case bool:
		return strconv.FormatBool(v), false
	default:
		b, _ := json.Marshal(v)
		return string(b), false
	}
}

// like compiles an SQL LIKE pattern: % any run, _ any character.
func like(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// compare orders numbers as numbers, anything else as strings.
func compare(got, want, modifier string) bool {
	c := strings.Compare(got, want)
	if g, err1 := strconv.ParseFloat(got, 64); err1 == nil {
		if w, err2 := strconv.ParseFloat(want, 64); err2 == nil {
			c = cmpFloat(g, w)
		}
	}
	switch modifier {
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	case "gt":
		return c > 0
	default:
		return c >= 0
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fields turns a document into its JSON fields, for filtering.
func fields(doc any) map[string]any {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// listing is what a list endpoint serves: its items (oldest first), their
// IDs, their documents and the fields it filters by.
type listing[T any] struct {
	typ     string
	items   []*T
	id      func(*T) string
	doc     func(*T) any
	filters []string
}

// list answers a list request: the items passing the request's filters,
// one page of them (?limit=, ?marker= from the previous page's next
// link), each read once (which settles transitioning ones).
func list[T any](s *Server, r *http.Request, l listing[T]) simkit.Response {
	filters := parseFilters(r, l.filters)
	kept := make([]*T, 0, len(l.items))
	for _, it := range l.items {
		if matches(fields(l.doc(it)), filters) {
			kept = append(kept, it)
		}
	}
	page, err := simkit.PageByMarker(r, kept, l.id, simkit.MarkerPages{Default: DefaultLimit, Max: MaxLimit})
	if err != nil {
		return invalid(codeInvalidFormat, paramName(err))
	}
	c := collection{
		Type: "collection", ResourceType: l.typ,
		Links:       map[string]string{"self": simkit.PageLink(r, nil)},
		CreateTypes: map[string]string{}, Actions: map[string]string{}, SortLinks: map[string]string{},
		Data:       []any{},
		Pagination: &pagination{Limit: page.Limit, Partial: page.More(len(kept))},
		Filters:    map[string][]condition{}, CreateDefaults: map[string]any{},
	}
	if page.More(len(kept)) {
		next := simkit.PageLink(r, map[string]string{"marker": l.id(kept[page.End-1]), "limit": strconv.Itoa(page.Limit)})
		c.Pagination.Next = &next
	}
	for _, f := range filters {
		for _, v := range f.values {
			c.Filters[f.field] = append(c.Filters[f.field], condition{Modifier: f.modifier, Value: v})
		}
	}
	for _, it := range kept[page.Start:page.End] {
		s.st.read(l.id(it))
		c.Data = append(c.Data, l.doc(it))
	}
	return ok(c)
}

// resources is a type of resource the API serves from one of the state's
// tables: its collection, filtered and paged, and each one by ID.
type resources[T any] struct {
	// typ is the type's schema: "stack".
	typ string
	// table is the state's table of them.
	table func(*state) *simkit.Table[T]
	id    func(*T) string
	// doc is one as the API answers it.
	doc func(view, *state, *T) any
}

// list answers GET of the collection: its resources passing the
// request's filters, one page of them, each read once.
func (rs resources[T]) list(s *Server) simkit.HandlerFunc {
	filters := mustSchema(rs.typ).filters
	return func(r *http.Request) simkit.Response {
		v := s.view(r)
		return list(s, r, listing[T]{typ: rs.typ, items: rs.table(s.st).All(), id: rs.id,
			doc: func(x *T) any { return rs.doc(v, s.st, x) }, filters: filters})
	}
}

// get answers GET of one: a read of it, which may settle it.
func (rs resources[T]) get(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		id := r.PathValue("id")
		s.st.read(id)
		x, found := rs.table(s.st).Get(id)
		if !found {
			return notFound()
		}
		return ok(rs.doc(s.view(r), s.st, x))
	}
}

func paramName(err error) string {
	if pe, ok := errors.AsType[*simkit.ParamError](err); ok {
		return pe.Param
	}
	return "limit"
}
