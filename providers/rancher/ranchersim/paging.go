package ranchersim

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Paging and sorting follow Cattle's ParseCollectionAttributes
// (parsePagination, parseSort) and AbstractJooqResourceManager (addSort,
// addLimit, processPaginationResult), Cattle v0.183 (Rancher 1.6):
//
//   - limit: a number up to MaxLimit; one above is MaxLimit, and so is
//     one of 0 or less (the Rancher CLI sends limit=-2 to get
//     everything); one that is not a (32-bit) number is ignored: the
//     DefaultLimit.
//   - marker: "m<offset>", as the next link writes it; any other marker
//     starts at the beginning.
//   - sort=<field>, order=asc|desc (desc in any case; anything else is
//     asc): the field must be one of the type's collectionFilters, else
//     the list is not sorted by it. Items are ordered by the field (null
//     first when ascending, as MySQL orders NULL), then by ID in the same
//     order; without sort, by ID.
//   - the collection's sortLinks hold, for each filter, the request's URL
//     with sort=<filter> (and no order); its sort is {name, order,
//     reverse}, reverse the URL with the order reversed and no marker.

// Paging of lists: Cattle's default page size, and the most a request
// may ask for (and gets when it asks for 0 or less).
const (
	DefaultLimit = 100
	MaxLimit     = 3000
)

// pageLimit is the page size a list request asks for, as Cattle reads
// its limit parameter.
func pageLimit(r *http.Request) int {
	raw := r.URL.Query().Get("limit")
	if raw == "" {
		return DefaultLimit
	}
	n, err := strconv.ParseInt(raw, 10, 32)
	switch {
	case err != nil:
		return DefaultLimit
	case n <= 0, n > MaxLimit:
		return MaxLimit
	}
	return int(n)
}

// pageOffset is where a list request's page starts: the offset its
// marker ("m<offset>") names, 0 for any other.
func pageOffset(r *http.Request) int {
	m := r.URL.Query().Get("marker")
	if !strings.HasPrefix(m, "m") {
		return 0
	}
	n, err := strconv.Atoi(m[1:])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// sortDoc is a collection's sort, as Cattle's Sort writes it.
type sortDoc struct {
	Name    string `json:"name"`
	Order   string `json:"order"`
	Reverse string `json:"reverse"`
}

// listSort is the sort a list request asks for: nil when it names no
// field the type filters by.
func listSort(r *http.Request, fields []string) *sortDoc {
	q := r.URL.Query()
	name := q.Get("sort")
	if name == "" || !slices.Contains(fields, name) {
		return nil
	}
	order, reverse := "asc", "desc"
	if strings.EqualFold(strings.TrimSpace(q.Get("order")), "desc") {
		order, reverse = "desc", "asc"
	}
	return &sortDoc{Name: name, Order: order,
		Reverse: simkit.PageLink(r, map[string]string{"order": reverse}, "marker")}
}

// sortLinks are a collection's links to itself sorted by each filter.
func sortLinks(r *http.Request, fields []string) map[string]string {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f] = simkit.PageLink(r, map[string]string{"sort": f}, "order")
	}
	return m
}

// sortDocs orders items (with their JSON fields) by the sort, then by
// ID; without a sort, by ID.
func sortDocs[T any](items []*T, docs map[*T]map[string]any, id func(*T) string, by *sortDoc) {
	desc := by != nil && by.Order == "desc"
	slices.SortStableFunc(items, func(a, b *T) int {
		c := 0
		if by != nil {
			c = compareField(docs[a][by.Name], docs[b][by.Name])
		}
		if c == 0 {
			c = compareIDs(id(a), id(b))
		}
		if desc {
			return -c
		}
		return c
	})
}

// compareField orders two values of a field, null first.
func compareField(a, b any) int {
	sa, nullA := scalar(a)
	sb, nullB := scalar(b)
	switch {
	case nullA && nullB:
		return 0
	case nullA:
		return -1
	case nullB:
		return 1
	}
	return compareValues(sa, sb)
}

// compareIDs orders IDs as Cattle orders its rows: by the database ID,
// the number an ID ends with (1h2 before 1h10).
func compareIDs(a, b string) int {
	return cmp.Or(cmp.Compare(idNumber(a), idNumber(b)), strings.Compare(a, b))
}

func idNumber(id string) int {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(id[i:])
	return n
}
