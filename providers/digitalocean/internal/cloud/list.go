package cloud

import (
	"context"
	"errors"
	"fmt"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

const (
	// ListPageSize is the API's largest page.
	ListPageSize = 200
	// MaxListPages bounds a list: 200,000 items; a list that never ends
	// is broken.
	MaxListPages = 1000
)

// ListAll reads every page of a list endpoint, 200 items at a time,
// following links.pages.next, through cloudapi.Pager: any failure fails
// the whole list, so a partial list never makes a droplet look deleted or
// a resource look missing (and get created twice). what names the
// resource, and the operation ("<what>.list") for metrics and logs.
//
// Every list answer of the API carries meta.total, the items of all
// pages. An answer without it, or a list whose items do not add up to it
// (an answer without its "droplets" member decodes as no droplets), is
// malformed: an error, never an account without the droplets. A droplet
// created or deleted between two pages of a long list fails that list
// too; the next sync reads it again.
func ListAll[T any](ctx context.Context, what string, list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error)) ([]T, error) {
	var all []T
	err := ListEach(ctx, what, list, func(page []T) error {
		all = append(all, page...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// ListEach is ListAll handing each page to use before the next one is
// read, for a caller that keeps a little of each item: it then holds one
// page of the SDK's records at a time, not the list (a droplet decodes to
// about 2 kB, its region's sizes and the image included; 5,000 of them are
// 10 MB, of which a node needs a few strings). As with ListAll, only a nil
// error means every page was used: after an error, what use kept is not
// the whole list. An error from use stops the list and is returned as is.
func ListEach[T any](ctx context.Context, what string, list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error), use func(page []T) error) error {
	ctx = cloudapi.WithOperation(ctx, what+".list")
	total, seen := 0, 0
	var fromUse error
	err := cloudapi.Pager[T]{
		Start:    cloudapi.PageNumber(1),
		MaxPages: MaxListPages,
		Fetch: func(ctx context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
			page, resp, err := list(ctx, &godo.ListOptions{Page: at.Page(), PerPage: ListPageSize})
			if err != nil {
				return nil, at, err
			}
			if resp == nil || resp.Meta == nil {
				return nil, at, errors.New("malformed response: a list page without meta.total")
			}
			total = resp.Meta.Total
			more := resp.Links != nil && !resp.Links.IsLastPage()
			return page, at.NextPage(more), nil
		},
	}.Each(ctx, func(page []T) error {
		seen += len(page)
		fromUse = use(page)
		return fromUse
	})
	switch {
	case err != nil && fromUse != nil:
		return err
	case err != nil:
		return fmt.Errorf("listing %s: %w", what, err)
	case seen != total:
		return fmt.Errorf("listing %s: malformed response: %d listed, meta.total says %d", what, seen, total)
	}
	return nil
}
