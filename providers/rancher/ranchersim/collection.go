package ranchersim

import (
	"encoding/json"
	"net/http"
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
// sorted (?sort=, ?order=; by ID otherwise), one page of them (?limit=,
// ?marker= from the previous page's next link), each read once (which
// settles transitioning ones).
func list[T any](s *Server, r *http.Request, l listing[T]) simkit.Response {
	filters := parseFilters(r, l.filters)
	docs := make(map[*T]map[string]any, len(l.items))
	kept := make([]*T, 0, len(l.items))
	for _, it := range l.items {
		if doc := fields(l.doc(it)); matches(doc, filters) {
			kept = append(kept, it)
			docs[it] = doc
		}
	}
	by := listSort(r, l.filters)
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
