package simkit

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func get(target string) *http.Request { return httptest.NewRequest(http.MethodGet, target, nil) }

func TestPageByNumber(t *testing.T) {
	o := NumberPages{Default: 2, Max: 3}
	for _, tc := range []struct {
		target                       string
		n                            int
		page, perPage, last, st, end int
	}{
		{"/x", 5, 1, 2, 3, 0, 2},
		{"/x?page=3", 5, 3, 2, 3, 4, 5},
		{"/x?page=4", 5, 4, 2, 3, 5, 5},            // past the last page: empty
		{"/x?page=2&per_page=9", 5, 2, 3, 2, 3, 5}, // per_page capped
		{"/x", 0, 1, 2, 1, 0, 0},                   // an empty list has one page
		{"/x?page=9223372036854775807", 5, 9223372036854775807, 2, 3, 5, 5},
	} {
		p, err := PageByNumber(get(tc.target), tc.n, o)
		want := NumberedPage{Page: tc.page, PerPage: tc.perPage, Last: tc.last, Start: tc.st, End: tc.end}
		if err != nil || p != want {
			t.Errorf("%s of %d: %+v %v, want %+v", tc.target, tc.n, p, err, want)
		}
	}
	r := get("http://127.0.0.1:8080/v2/droplets?tag_name=k8s&page=1")
	p, _ := PageByNumber(r, 5, o)
	if got := p.Link(r, 2); got != "http://127.0.0.1:8080/v2/droplets?page=2&per_page=2&tag_name=k8s" {
		t.Errorf("Link = %s", got)
	}
	for _, target := range []string{"/x?page=0", "/x?per_page=-1", "/x?page=a"} {
		var pe *ParamError
		if _, err := PageByNumber(get(target), 5, o); !errors.As(err, &pe) {
			t.Errorf("%s: %v", target, err)
		}
	}
}

func TestPageByMarker(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	id := func(s string) string { return s }
	for _, tc := range []struct {
		target         string
		o              MarkerPages
		limit, st, end int
		more, full     bool
	}{
		{"/x", MarkerPages{}, 0, 0, 5, false, false},                         // Neutron: no limit, everything
		{"/x?limit=2", MarkerPages{}, 2, 0, 2, true, true},                   // a limit
		{"/x?limit=2&marker=d", MarkerPages{}, 2, 4, 5, false, false},        // the rest
		{"/x?limit=0", MarkerPages{Default: 3, Max: 3}, 3, 0, 3, true, true}, // Nova: 0 is the default
		{"/x?limit=9&marker=b", MarkerPages{Default: 3, Max: 3}, 3, 2, 5, false, true},
		{"/x?marker=e", MarkerPages{Default: 3}, 3, 5, 5, false, false},
	} {
		p, err := PageByMarker(get(tc.target), items, id, tc.o)
		if err != nil || p.Limit != tc.limit || p.Start != tc.st || p.End != tc.end || p.More(len(items)) != tc.more || p.Full() != tc.full {
			t.Errorf("%s %+v: %+v (more %v, full %v) %v", tc.target, tc.o, p, p.More(len(items)), p.Full(), err)
		}
	}
	if _, err := PageByMarker(get("/x?marker=zz"), items, id, MarkerPages{}); !errors.Is(err, ErrUnknownMarker) {
		t.Errorf("unknown marker: %v", err)
	}
	var pe *ParamError
	if _, err := PageByMarker(get("/x?limit=-1"), items, id, MarkerPages{}); !errors.As(err, &pe) || pe.Param != "limit" {
		t.Errorf("negative limit: %v", err)
	}

	// Rancher's style: follow pagination.next, whose marker the server
	// chose, until there is none.
	var seen []string
	target := "http://rancher.test/v2-beta/hosts?limit=2"
	for range len(items) {
		r := get(target)
		p, err := PageByMarker(r, items, id, MarkerPages{Default: 100})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, items[p.Start:p.End]...)
		if !p.More(len(items)) {
			target = ""
			break
		}
		target = PageLink(r, map[string]string{"marker": items[p.End-1], "limit": strconv.Itoa(p.Limit)})
	}
	if target != "" || len(seen) != len(items) {
		t.Errorf("walked %v, next %q", seen, target)
	}
}

func TestPageByOffset(t *testing.T) {
	o := OffsetPages{Default: 1000, Max: 1000}
	for _, tc := range []struct {
		target              string
		off, limit, st, end int
	}{
		{"/acct/machines?offset=0", 0, 1000, 0, 5},
		{"/acct/machines?offset=2&limit=2", 2, 2, 2, 4},
		{"/acct/machines?offset=9&limit=2", 9, 2, 5, 5},
		{"/acct/machines?limit=5000", 0, 1000, 0, 5},
	} {
		p, err := PageByOffset(get(tc.target), 5, o)
		if want := (OffsetPage{Offset: tc.off, Limit: tc.limit, Start: tc.st, End: tc.end}); err != nil || p != want {
			t.Errorf("%s: %+v %v, want %+v", tc.target, p, err, want)
		}
	}
	for _, target := range []string{"/x?offset=-1", "/x?limit=0", "/x?offset=a"} {
		if _, err := PageByOffset(get(target), 5, o); err == nil {
			t.Errorf("%s: no error", target)
		}
	}
}

func TestPageLink(t *testing.T) {
	r := get("http://127.0.0.1:9/network/v2.0/ports?device_id=x&page_reverse=True&marker=a")
	got := PageLink(r, map[string]string{"marker": "b", "limit": "2"}, "page_reverse")
	if got != "http://127.0.0.1:9/network/v2.0/ports?device_id=x&limit=2&marker=b" {
		t.Errorf("PageLink = %s", got)
	}
}
