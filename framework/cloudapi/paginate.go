package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// DefaultMaxPages bounds a list whose Pager sets no MaxPages: ten thousand
// pages of even 100 items is far beyond any account, so a list that goes
// on is a broken server, not a big cloud.
const DefaultMaxPages = 10_000

// Cursor names one page of a list in one of the styles cloud APIs use:
// a page number (DigitalOcean, Rancher's own pages), an offset (Triton), a
// marker, the ID of the previous page's last item (OpenStack), or a link
// to the page (OpenStack's "<plural>_links", Rancher's pagination.next).
// The zero Cursor is Done: there is no page after this one.
type Cursor struct {
	kind   cursorKind
	page   int
	offset int
	marker string
	link   string
}

type cursorKind uint8

const (
	doneCursor cursorKind = iota
	pageCursor
	offsetCursor
	markerCursor
	linkCursor
)

// Done is the cursor after the last page.
var Done = Cursor{}

// PageNumber is the cursor of page n; lists start at page 1 (or where the
// API says).
func PageNumber(n int) Cursor { return Cursor{kind: pageCursor, page: n} }

// Offset is the cursor of the page that starts after n items.
func Offset(n int) Cursor { return Cursor{kind: offsetCursor, offset: n} }

// Marker is the cursor of the page after the item with the given ID; ""
// is the first page.
func Marker(id string) Cursor { return Cursor{kind: markerCursor, marker: id} }

// Link is the cursor of the page at u; "" is Done, so a missing next link
// ends the list.
func Link(u string) Cursor {
	if u == "" {
		return Done
	}
	return Cursor{kind: linkCursor, link: u}
}

// NextPage is the cursor after page-number cursor c: the next page when
// the API says more follow (a next link, a next-page field), else Done.
func (c Cursor) NextPage(more bool) Cursor {
	if !more {
		return Done
	}
	return PageNumber(c.page + 1)
}

// NextOffset is the cursor after offset cursor c and a page of n items:
// the offset past them when more follow, else Done. An API that says
// nothing about more (Triton) has more when the page is full: n == limit.
func (c Cursor) NextOffset(n int, more bool) Cursor {
	if !more {
		return Done
	}
	return Offset(c.offset + n)
}

// NextMarker is the cursor after a page whose last item has ID lastID:
// the page after it when more follow, else Done.
func NextMarker(lastID string, more bool) Cursor {
	if !more {
		return Done
	}
	return Marker(lastID)
}

// IsDone reports whether c is Done.
func (c Cursor) IsDone() bool { return c.kind == doneCursor }

// Page is the page number of a PageNumber cursor.
func (c Cursor) Page() int { return c.page }

// Offset is the offset of an Offset cursor.
func (c Cursor) Offset() int { return c.offset }

// Marker is the marker of a Marker cursor.
func (c Cursor) Marker() string { return c.marker }

// Link is the URL of a Link cursor.
func (c Cursor) Link() string { return c.link }

// String describes c for errors; a link has its credentials redacted.
func (c Cursor) String() string {
	switch c.kind {
	case pageCursor:
		return "page " + strconv.Itoa(c.page)
	case offsetCursor:
		return "offset " + strconv.Itoa(c.offset)
	case markerCursor:
		return fmt.Sprintf("marker %q", c.marker)
	case linkCursor:
		u, err := url.Parse(c.link)
		if err != nil {
			return "link " + Redacted
		}
		return "link " + RedactURL(u)
	}
	return "done"
}

// describe names c, the nth page read, for errors.
func (c Cursor) describe(n int) string {
	if c.kind == pageCursor && c.page == n {
		return c.String()
	}
	return fmt.Sprintf("page %d (%s)", n, c)
}

// before reports whether the ordered cursor c comes before d: a
// page-number or offset list only moves forward.
func (c Cursor) before(d Cursor) bool {
	switch {
	case c.kind != d.kind:
		return false
	case c.kind == pageCursor:
		return c.page < d.page
	case c.kind == offsetCursor:
		return c.offset < d.offset
	}
	return false
}

// Pager reads a paginated list, one page at a time, for any item type and
// cursor style. Any failure fails the whole list, because a partial list
// must never look complete: a missing VM would make a Node look deleted, a
// missing load balancer would be created twice. Besides the fetch errors,
// the list fails when it
//
//   - runs past MaxPages (a server that never ends a list);
//   - names as next a page it has read already, or a page-number or
//     offset cursor that moves backwards (a next link pointing back);
//   - returns an empty page that names a next one (a server that claims
//     more than it has, which would otherwise be followed to MaxPages).
type Pager[T any] struct {
	// Start is the first page: PageNumber(1), Offset(0), Marker("") or
	// Link(firstURL). Done is an error.
	Start Cursor
	// MaxPages bounds the list; 0 means DefaultMaxPages.
	MaxPages int
	// Fetch reads the page at at and returns its items and the cursor of
	// the next page, Done after the last. The helpers NextPage,
	// NextOffset, NextMarker and Link build it from what the API said.
	Fetch func(ctx context.Context, at Cursor) (items []T, next Cursor, err error)
}

// Each reads every page and hands each page's items to each, as soon as
// the page is read and checked, so a caller can decode a big list page by
// page. It returns nil only when the whole list was read; after an error
// the pages each saw are not the whole list and must be discarded. An
// error from each stops the list and is returned as is.
func (p Pager[T]) Each(ctx context.Context, each func([]T) error) error {
	maxPages := p.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	if p.Start.IsDone() {
		return errors.New("listing: no first page")
	}
	seen := map[Cursor]bool{}
	at := p.Start
	for n := 1; !at.IsDone(); n++ {
		if n > maxPages {
			return fmt.Errorf("more than %d pages", maxPages)
		}
		seen[at] = true
		items, next, err := p.Fetch(ctx, at)
		switch {
		case err != nil:
			return fmt.Errorf("page %d: %w", n, err)
		case next.IsDone():
		case seen[next] || next.before(at):
			return fmt.Errorf("%s points back to %s", at.describe(n), next)
		case len(items) == 0:
			return fmt.Errorf("%s is empty but links to a next page (%s)", at.describe(n), next)
		}
		if len(items) > 0 {
			if err := each(items); err != nil {
				return err
			}
		}
		at = next
	}
	return nil
}

// All reads every page and returns all the items, or an error and no
// items.
func (p Pager[T]) All(ctx context.Context) ([]T, error) {
	var all []T
	err := p.Each(ctx, func(items []T) error {
		all = append(all, items...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}
