package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// maxListPages bounds a list; Nova and Octavia pages hold up to their
// max_limit (1000 by default), so this is far beyond any project.
const maxListPages = 10000

// pageLink is one of a list's "<plural>_links".
type pageLink struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// EachPage reads a paginated OpenStack list straight into T values, one
// page at a time, through cloudapi.Pager with link cursors: GET u, decode
// the page's plural array, then follow the rel="next" link of
// "<plural>_links" until a page has no next link. Decoding into T
// directly (rather than gophercloud's generic map, marshalled again and
// decoded into the result type) keeps a big list (a thousand servers, a
// pool's thousand members) from costing several times its size in
// garbage. Any failure fails the whole list: a partial list must never
// look complete. An empty page ends the list, as it does gophercloud's
// pager, unless it links to a next page: that fails it.
func EachPage[T any](ctx context.Context, c *gophercloud.ServiceClient, u, plural string, each func([]T) error) error {
	return cloudapi.Pager[T]{
		Start:    cloudapi.Link(u),
		MaxPages: maxListPages,
		Fetch: func(ctx context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
			return fetchPage[T](ctx, c, at.Link(), plural)
		},
	}.Each(ctx, each)
}

// fetchPage reads the page at u: its plural array and its next link.
func fetchPage[T any](ctx context.Context, c *gophercloud.ServiceClient, u, plural string) ([]T, cloudapi.Cursor, error) {
	var page map[string]json.RawMessage
	resp, err := c.Get(ctx, u, &page, nil)
	closeBody(resp)
	if err != nil {
		return nil, cloudapi.Done, ServiceError(err)
	}
	raw, ok := page[plural]
	if !ok {
		return nil, cloudapi.Done, fmt.Errorf("malformed response: no %q", plural)
	}
	var items []T
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, cloudapi.Done, err
	}
	next, err := nextLink(page[plural+"_links"])
	if err != nil {
		return nil, cloudapi.Done, err
	}
	return items, cloudapi.Link(next), nil
}

// ListAll is EachPage collecting every item.
func ListAll[T any](ctx context.Context, c *gophercloud.ServiceClient, u, plural string) ([]T, error) {
	var all []T
	err := EachPage(ctx, c, u, plural, func(items []T) error {
		all = append(all, items...)
		return nil
	})
	return all, err
}

func nextLink(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var links []pageLink
	if err := json.Unmarshal(raw, &links); err != nil {
		return "", fmt.Errorf("malformed links: %w", err)
	}
	for _, l := range links {
		if l.Rel == "next" {
			return l.Href, nil
		}
	}
	return "", nil
}

// closeBody closes the body of a response gophercloud decoded (it closes
// it itself then; a second Close is harmless).
func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
}

// WithQuery is u with the query parameters q ("" for none).
func WithQuery(u string, q url.Values) string {
	if len(q) == 0 {
		return u
	}
	return u + "?" + q.Encode()
}
