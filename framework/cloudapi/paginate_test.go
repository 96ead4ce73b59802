package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeList is a list of n items ("item-0" ...) served in pages of limit,
// in each cursor style the way clouds serve them.
type fakeList struct {
	n, limit int
	fetches  []Cursor
}

func (l *fakeList) items(from int) []string {
	var out []string
	for i := from; i < min(from+l.limit, l.n); i++ {
		out = append(out, "item-"+strconv.Itoa(i))
	}
	return out
}

// pages: page-number with a "next page exists" flag (DigitalOcean).
func (l *fakeList) pages(_ context.Context, at Cursor) ([]string, Cursor, error) {
	l.fetches = append(l.fetches, at)
	from := (at.Page() - 1) * l.limit
	return l.items(from), at.NextPage(from+l.limit < l.n), nil
}

// offsets: offset/limit with no flag; a full page means more (Triton).
func (l *fakeList) offsets(_ context.Context, at Cursor) ([]string, Cursor, error) {
	l.fetches = append(l.fetches, at)
	items := l.items(at.Offset())
	return items, at.NextOffset(len(items), len(items) == l.limit), nil
}

// markers: marker/limit; a full page means more.
func (l *fakeList) markers(_ context.Context, at Cursor) ([]string, Cursor, error) {
	l.fetches = append(l.fetches, at)
	from := 0
	if at.Marker() != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(at.Marker(), "item-"))
		if err != nil {
			return nil, Done, err
		}
		from = n + 1
	}
	items := l.items(from)
	if len(items) == 0 {
		return nil, Done, nil
	}
	return items, NextMarker(items[len(items)-1], len(items) == l.limit), nil
}

// links: next links carrying the marker (OpenStack).
func (l *fakeList) links(ctx context.Context, at Cursor) ([]string, Cursor, error) {
	from, err := strconv.Atoi(strings.TrimPrefix(at.Link(), "https://api.example/things?from="))
	if err != nil {
		return nil, Done, err
	}
	l.fetches = append(l.fetches, at)
	items := l.items(from)
	if from+l.limit >= l.n {
		return items, Done, nil
	}
	return items, Link(fmt.Sprintf("https://api.example/things?from=%d", from+l.limit)), nil
}

func wantItems(n int) []string {
	var out []string
	for i := range n {
		out = append(out, "item-"+strconv.Itoa(i))
	}
	return out
}

// TestPagerStyles reads the same list in each cursor style.
func TestPagerStyles(t *testing.T) {
	type style struct {
		start Cursor
		fetch func(*fakeList) func(context.Context, Cursor) ([]string, Cursor, error)
	}
	styles := map[string]style{
		"page number": {PageNumber(1), func(l *fakeList) func(context.Context, Cursor) ([]string, Cursor, error) { return l.pages }},
		"offset":      {Offset(0), func(l *fakeList) func(context.Context, Cursor) ([]string, Cursor, error) { return l.offsets }},
		"marker":      {Marker(""), func(l *fakeList) func(context.Context, Cursor) ([]string, Cursor, error) { return l.markers }},
		"link":        {Link("https://api.example/things?from=0"), func(l *fakeList) func(context.Context, Cursor) ([]string, Cursor, error) { return l.links }},
	}
	sizes := []struct {
		n, limit   int
		minPages   int // fetches a style needs at least
		maxFetches int // and at most (a full last page costs an empty one without a flag)
	}{
		{0, 3, 1, 1},
		{1, 3, 1, 1},
		{3, 3, 1, 2},
		{7, 3, 3, 3},
		{9, 3, 3, 4},
	}
	for name, s := range styles {
		for _, size := range sizes {
			t.Run(fmt.Sprintf("%s/%d by %d", name, size.n, size.limit), func(t *testing.T) {
				l := &fakeList{n: size.n, limit: size.limit}
				got, err := Pager[string]{Start: s.start, Fetch: s.fetch(l)}.All(t.Context())
				if err != nil {
					t.Fatalf("All: %v", err)
				}
				if diff := cmp.Diff(wantItems(size.n), got); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
				if f := len(l.fetches); f < size.minPages || f > size.maxFetches {
					t.Errorf("%d fetches (%v), want %d to %d", f, l.fetches, size.minPages, size.maxFetches)
				}
			})
		}
	}
}

// TestPagerEachStreams: Each hands over every page as read, in order, and
// keeps nothing itself.
func TestPagerEachStreams(t *testing.T) {
	l := &fakeList{n: 7, limit: 3}
	var pages [][]string
	err := Pager[string]{Start: PageNumber(1), Fetch: l.pages}.Each(t.Context(), func(items []string) error {
		pages = append(pages, items)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"item-0", "item-1", "item-2"}, {"item-3", "item-4", "item-5"}, {"item-6"}}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}

	stop := errors.New("enough")
	calls := 0
	err = Pager[string]{Start: PageNumber(1), Fetch: l.pages}.Each(t.Context(), func([]string) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Each with a failing callback = %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// scripted answers page i of a list with script[i]: its items and next.
type scripted struct {
	items []string
	next  Cursor
	err   error
}

func scriptedFetch(script map[Cursor]scripted) func(context.Context, Cursor) ([]string, Cursor, error) {
	return func(_ context.Context, at Cursor) ([]string, Cursor, error) {
		s, ok := script[at]
		if !ok {
			return nil, Done, fmt.Errorf("no such page %s", at)
		}
		return s.items, s.next, s.err
	}
}

// TestPagerGuards: each way a server can break a list fails the whole
// list, with no items.
func TestPagerGuards(t *testing.T) {
	boom := errors.New("500 Internal Server Error")
	endless := func(_ context.Context, at Cursor) ([]string, Cursor, error) {
		return []string{at.String()}, at.NextPage(true), nil
	}
	link := func(from int) Cursor { return Link(fmt.Sprintf("https://api.example/things?from=%d", from)) }
	tests := []struct {
		name     string
		pager    Pager[string]
		wantErr  string
		wantWrap error
	}{
		{
			name: "a failing page",
			pager: Pager[string]{Start: PageNumber(1), Fetch: scriptedFetch(map[Cursor]scripted{
				PageNumber(1): {items: []string{"a"}, next: PageNumber(2)},
				PageNumber(2): {err: boom},
			})},
			wantErr: "page 2: 500", wantWrap: boom,
		},
		{
			name:    "past the page bound",
			pager:   Pager[string]{Start: PageNumber(1), MaxPages: 5, Fetch: endless},
			wantErr: "more than 5 pages",
		},
		{
			name:    "past the default bound",
			pager:   Pager[string]{Start: PageNumber(1), Fetch: endless},
			wantErr: fmt.Sprintf("more than %d pages", DefaultMaxPages),
		},
		{
			name: "a next link pointing back",
			pager: Pager[string]{Start: link(0), Fetch: scriptedFetch(map[Cursor]scripted{
				link(0): {items: []string{"a"}, next: link(1)},
				link(1): {items: []string{"b"}, next: link(0)},
			})},
			wantErr: "page 2 (link https://api.example/things?from=1) points back to link https://api.example/things?from=0",
		},
		{
			name: "a next link to itself",
			pager: Pager[string]{Start: link(0), Fetch: scriptedFetch(map[Cursor]scripted{
				link(0): {items: []string{"a"}, next: link(0)},
			})},
			wantErr: "points back",
		},
		{
			name: "a page number going back to one not read",
			pager: Pager[string]{Start: PageNumber(1), Fetch: scriptedFetch(map[Cursor]scripted{
				PageNumber(1): {items: []string{"a"}, next: PageNumber(3)},
				PageNumber(3): {items: []string{"c"}, next: PageNumber(2)},
			})},
			wantErr: "page 2 (page 3) points back to page 2",
		},
		{
			name: "an offset going back",
			pager: Pager[string]{Start: Offset(0), Fetch: scriptedFetch(map[Cursor]scripted{
				Offset(0): {items: []string{"a", "b"}, next: Offset(2)},
				Offset(2): {items: []string{"c", "d"}, next: Offset(1)},
			})},
			wantErr: "page 2 (offset 2) points back to offset 1",
		},
		{
			name: "a repeated marker",
			pager: Pager[string]{Start: Marker(""), Fetch: scriptedFetch(map[Cursor]scripted{
				Marker(""):  {items: []string{"a", "b"}, next: Marker("b")},
				Marker("b"): {items: []string{"c", "d"}, next: Marker("b")},
			})},
			wantErr: `points back to marker "b"`,
		},
		{
			name: "an empty page that claims more",
			pager: Pager[string]{Start: PageNumber(1), Fetch: scriptedFetch(map[Cursor]scripted{
				PageNumber(1): {items: []string{"a"}, next: PageNumber(2)},
				PageNumber(2): {next: PageNumber(3)},
			})},
			wantErr: "page 2 is empty but links to a next page (page 3)",
		},
		{
			name:    "no first page",
			pager:   Pager[string]{Start: Done, Fetch: endless},
			wantErr: "no first page",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.pager.All(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("All = %v, %v; want an error containing %q", got, err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("All returned %d items with its error; a partial list must not look like one", len(got))
			}
			if tt.wantWrap != nil && !errors.Is(err, tt.wantWrap) {
				t.Errorf("error %v does not wrap %v", err, tt.wantWrap)
			}
		})
	}
}

// TestPagerEmptyLastPage: an empty page that names no next one ends the
// list, as after a full page of an API that cannot tell (Nova).
func TestPagerEmptyLastPage(t *testing.T) {
	got, err := Pager[string]{Start: Marker(""), Fetch: scriptedFetch(map[Cursor]scripted{
		Marker(""):  {items: []string{"a", "b"}, next: Marker("b")},
		Marker("b"): {next: Done},
	})}.All(t.Context())
	if err != nil || !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("All = %v, %v; want [a b]", got, err)
	}
}

func TestCursorString(t *testing.T) {
	for c, want := range map[Cursor]string{
		Done:            "done",
		PageNumber(2):   "page 2",
		Offset(400):     "offset 400",
		Marker("srv-1"): `marker "srv-1"`,
		Link("https://api.example/servers?limit=2&token=s3cret"): "link https://api.example/servers?limit=2&token=" + Redacted,
	} {
		if got := c.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
	if !Link("").IsDone() {
		t.Error(`Link("") is not Done: a missing next link would not end the list`)
	}
}
