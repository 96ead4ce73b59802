package ranchersim

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
)

// TestLimit: Cattle's ParseCollectionAttributes.parsePagination (v0.183):
// a limit of 0 or less is its maximum, 3000 (the Rancher CLI v0.6 sends
// limit=-2 on every list, cmd/util_ls.go baseListOpts); one above is
// 3000; one that is not a number (new Integer(limit) fails, so also one
// past 32 bits) is ignored: the default, 100. None is an error.
func TestLimit(t *testing.T) {
	s := NewServer(t, Options{ProvisioningReads: -1})
	for range 105 {
		s.AddHost(Host{})
	}
	for _, tc := range []struct {
		limit     string
		wantLimit int
		wantN     int
	}{
		{"", DefaultLimit, 100},
		{"-2", MaxLimit, 105},
		{"0", MaxLimit, 105},
		{"abc", DefaultLimit, 100},
		{"99999999999", DefaultLimit, 100},
		{"5000", MaxLimit, 105},
		{"3000", 3000, 105},
		{"7", 7, 7},
	} {
		path := "/hosts"
		if tc.limit != "" {
			path += "?limit=" + url.QueryEscape(tc.limit)
		}
		a := call(t, s, http.MethodGet, path, "")
		p, _ := a.body["pagination"].(map[string]any)
		if a.status != http.StatusOK || p["limit"] != float64(tc.wantLimit) || len(a.dataIDs()) != tc.wantN ||
			p["partial"] != (tc.wantN < 105) {
			t.Errorf("limit=%q: %d, pagination %v, %d hosts; want limit %d, %d hosts", tc.limit, a.status, p, len(a.dataIDs()), tc.wantLimit, tc.wantN)
		}
	}
	if MaxLimit != 3000 {
		t.Errorf("MaxLimit = %d, want Cattle's 3000", MaxLimit)
	}
}

// TestNextMarker: Cattle pages by offset: the next link is the request's
// URL with marker=m<offset> (AbstractJooqResourceManager.
// processPaginationResult, DefaultUrlBuilder.next); any other marker
// starts at the beginning (getOffset).
func TestNextMarker(t *testing.T) {
	s := NewServer(t, Options{ProvisioningReads: -1})
	for range 5 {
		s.AddHost(Host{})
	}
	a := call(t, s, http.MethodGet, "/hosts?limit=2&sort=id&order=desc", "")
	p, _ := a.body["pagination"].(map[string]any)
	next, _ := p["next"].(string)
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("marker") != "m2" || u.Query().Get("sort") != "id" || u.Query().Get("limit") != "2" {
		t.Fatalf("next = %q, want the request's URL with marker=m2", next)
	}
	var ids []string
	for page := 1; next != ""; page++ {
		if page > 5 {
			t.Fatal("more pages than hosts")
		}
		a = call(t, s, http.MethodGet, next, "")
		ids = append(ids, a.dataIDs()...)
		p, _ = a.body["pagination"].(map[string]any)
		next, _ = p["next"].(string)
	}
	if want := []string{"1h3", "1h2", "1h1"}; !slices.Equal(ids, want) {
		t.Errorf("pages after the first = %v, want %v", ids, want)
	}
	if got := call(t, s, http.MethodGet, "/hosts?limit=2&marker=1h2", "").dataIDs(); !slices.Equal(got, []string{"1h1", "1h2"}) {
		t.Errorf("marker=1h2 (an ID) = %v, want the first page", got)
	}
}

// TestSort: Cattle's parseSort takes sort=<field> when the field is one
// of the type's collectionFilters (else it is ignored) and order=asc or
// desc in any case (else asc); the list is ordered by the field, then by
// ID the same way (AbstractJooqResourceManager.addSort). The collection
// carries sortLinks, one per filter, and sort {name, order, reverse}
// (AbstractBaseResourceManager.addSort, DefaultUrlBuilder.sort and
// reverseSort).
func TestSort(t *testing.T) {
	s := NewServer(t, Options{ProvisioningReads: -1})
	for _, name := range []string{"bravo", "alpha", "charlie", "alpha"} {
		s.AddStack(Stack{Name: name + strconv.Itoa(len(s.Stacks())%2)})
	}
	names := func(a answer) []string {
		var out []string
		for _, d := range a.body["data"].([]any) {
			out = append(out, d.(map[string]any)["name"].(string))
		}
		return out
	}
	asc := call(t, s, http.MethodGet, "/stacks?sort=name", "")
	if got, want := names(asc), []string{"alpha1", "alpha1", "bravo0", "charlie0"}; !slices.Equal(got, want) {
		t.Errorf("sort=name: %v, want %v", got, want)
	}
	if got := asc.dataIDs(); got[0] != "1st2" || got[1] != "1st4" {
		t.Errorf("sort=name: equal names by ID ascending: %v", got)
	}
	desc := call(t, s, http.MethodGet, "/stacks?sort=name&order=DESC", "")
	if got, want := names(desc), []string{"charlie0", "bravo0", "alpha1", "alpha1"}; !slices.Equal(got, want) {
		t.Errorf("sort=name&order=DESC: %v, want %v", got, want)
	}
	if got := desc.dataIDs(); got[2] != "1st4" || got[3] != "1st2" {
		t.Errorf("order=desc: equal names by ID descending: %v", got)
	}
	sortDoc, _ := desc.body["sort"].(map[string]any)
	rev, _ := url.Parse(toString(sortDoc["reverse"]))
	if sortDoc["name"] != "name" || sortDoc["order"] != "desc" || rev == nil || rev.Query().Get("order") != "asc" || rev.Query().Get("sort") != "name" {
		t.Errorf("sort = %v, want name, desc and the reverse link", sortDoc)
	}
	links, _ := desc.body["sortLinks"].(map[string]any)
	byName, _ := url.Parse(toString(links["name"]))
	if len(links) != len(mustSchema("stack").filters) || byName == nil || byName.Query().Get("sort") != "name" || byName.Query().Has("order") {
		t.Errorf("sortLinks = %v, want one per filter, without order", links)
	}
	for _, q := range []string{"", "?sort=hostname", "?order=desc", "?sort=name&order=sideways"} {
		a := call(t, s, http.MethodGet, "/stacks"+q, "")
		want := []string{"1st1", "1st2", "1st3", "1st4"}
		if q == "?sort=name&order=sideways" {
			want = []string{"1st2", "1st4", "1st1", "1st3"}
		}
		if got := a.dataIDs(); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
		if q != "?sort=name&order=sideways" && a.body["sort"] != nil {
			t.Errorf("%q: sort = %v, want null", q, a.body["sort"])
		}
	}
}

func toString(v any) string { s, _ := v.(string); return s }
