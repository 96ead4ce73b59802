package ranchersim

import (
	"cmp"
	"encoding/json"
	"net/http"
	"reflect"
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
	// hostEPs indexes the public endpoints by host for the hosts the
	// request answers (endpoints.go); nil: none, each host computes its
	// own.
	hostEPs *hostEndpointIndex
}

func (s *Server) view(r *http.Request) view {
	base := simkit.BaseURL(r)
	v := view{base: base, project: s.ProjectURL(base), include: map[string]bool{}, hostEPs: &hostEndpointIndex{}}
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

// fields returns the named fields of a document as its JSON has them,
// for filtering and sorting; nil when none is named. Only those fields
// are encoded (jsonField): a list of 5,000 hosts reads every host's for
// each page, and the whole document through JSON made a page cost half a
// second.
func fields(doc any, names []string) map[string]any {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]any, len(names))
	for _, n := range names {
		if v, ok := jsonField(reflect.ValueOf(doc), n); ok {
			m[n] = v
		}
	}
	return m
}

// jsonField is the field name of the JSON object v encodes to, decoded
// as encoding/json decodes into an any; false when the object has no such
// field (omitted, as omitempty omits an empty one). v is a struct (its
// embedded structs' fields promoted, as encoding/json promotes them), a
// map with string keys, or a pointer or interface holding one.
func jsonField(v reflect.Value, name string) (any, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		f := v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
		if !f.IsValid() {
			return nil, false
		}
		return decoded(f)
	case reflect.Struct:
	default:
		return nil, false
	}
	// The struct's own fields first: they hide an embedded struct's of
	// the same name, as in encoding/json.
	t := v.Type()
	var embedded []int
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case tag == "-":
			continue
		case sf.Anonymous && tag == "":
			embedded = append(embedded, i)
			continue
		case !sf.IsExported() || cmp.Or(tag, sf.Name) != name:
			continue
		}
		f := v.Field(i)
		if strings.Contains(","+opts+",", ",omitempty,") && emptyJSON(f) {
			return nil, false
		}
		return decoded(f)
	}
	for _, i := range embedded {
		if got, ok := jsonField(v.Field(i), name); ok {
			return got, true
		}
	}
	return nil, false
}

// emptyJSON is encoding/json's omitempty test.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// decoded is v through JSON, as an any.
func decoded(v reflect.Value) (any, bool) {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, false
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil, false
	}
	return out, true
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
// sorted (?sort=, ?order=; by ID otherwise), one page of them (?limit=,
// ?marker= from the previous page's next link), each read once (which
// settles transitioning ones).
func list[T any](s *Server, r *http.Request, l listing[T]) simkit.Response {
	filters := parseFilters(r, l.filters)
	by := listSort(r, l.filters)
	var read []string // the fields the filters and the sort read
	for _, f := range filters {
		read = append(read, f.field)
	}
	if by != nil {
		read = append(read, by.Name)
	}
	docs := make(map[*T]map[string]any, len(l.items))
	kept := make([]*T, 0, len(l.items))
	for _, it := range l.items {
		if len(read) == 0 {
			kept = append(kept, it)
			continue
		}
		if doc := fields(l.doc(it), read); matches(doc, filters) {
			kept = append(kept, it)
			docs[it] = doc
		}
	}
	sortDocs(kept, docs, l.id, by)
	limit, start := pageLimit(r), min(pageOffset(r), len(kept))
	end := min(start+limit, len(kept))
	c := collection{
		Type: "collection", ResourceType: l.typ,
		Links:       map[string]string{"self": simkit.PageLink(r, nil)},
		CreateTypes: map[string]string{}, Actions: map[string]string{}, SortLinks: sortLinks(r, l.filters),
		Data:       []any{},
		Pagination: &pagination{Limit: limit, Partial: end < len(kept)},
		Filters:    map[string][]condition{}, CreateDefaults: map[string]any{},
	}
	if by != nil {
		c.Sort = by
	}
	if end < len(kept) {
		next := simkit.PageLink(r, map[string]string{"marker": "m" + strconv.Itoa(end)})
		c.Pagination.Next = &next
	}
	for _, f := range l.filters {
		c.Filters[f] = nil
	}
	for _, f := range filters {
		for _, v := range f.values {
			c.Filters[f.field] = append(c.Filters[f.field], condition{Modifier: f.modifier, Value: v})
		}
	}
	for _, it := range kept[start:end] {
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
