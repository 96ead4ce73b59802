package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file builds the godo client and holds the rules every call follows:
//
//   - requests go through the framework's *http.Client (User-Agent, rate
//     limit, retries honouring Retry-After, metrics, redacted logs); godo's
//     own retry and rate limiter stay off so nothing is done twice;
//   - the token is added per request, so a rotated DO_ACCESS_TOKEN_FILE
//     applies at once, and only for the API's own host;
//   - only the API's own 404 for the one droplet a request named is an
//     authoritative not-found (isAPINotFound); a 401, a 5xx, a timeout or a
//     proxy's HTML 404 is an error, so no Node is deleted on it.

const (
	defaultAPIURL = "https://api.digitalocean.com/"
	listPageSize  = 200  // the API's maximum
	maxListPages  = 1000 // 200,000 droplets; a list that never ends is broken
)

// newGodoClient returns a godo client for cfg over hc.
func newGodoClient(cfg *Config, hc *http.Client) (*godo.Client, error) {
	base := cfg.OverrideURL
	if base == "" {
		base = defaultAPIURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, errors.New("DO_OVERRIDE_URL: not a valid URL")
	}
	// The token is revealed per request, so a rotated DO_ACCESS_TOKEN_FILE
	// applies at once, and is sent only to the API's own host.
	c, err := godo.New(cloudapi.WithBearerToken(hc, u.Host, cfg.Token.Reveal), godo.SetBaseURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("building the DigitalOcean client: %w", err)
	}
	return c, nil
}

// statusOf returns the HTTP status of an API error answer, 0 for any other
// error (a timeout, a refused connection).
func statusOf(err error) int {
	var e *godo.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// notFound is DigitalOcean's "no such resource": a 404 whose JSON error
// body has the id "not_found" ({"id":"not_found","message":...}).
var notFound = cloudapi.NotFoundRule{Condition: cloudapi.FieldEquals("not_found", "id")}

// isAPINotFound reports whether err is the API's own 404 for the one
// resource a request named (see cloudapi.NotFoundRule): a 404 page from a
// proxy or a wrong DO_OVERRIDE_URL path does not count. Callers use it
// only for requests that named one resource.
func isAPINotFound(err error) bool {
	var e *godo.ErrorResponse
	return errors.As(err, &e) && notFound.IsNotFound(cloudapi.OneResource, cloudapi.AnswerOf(e.Response))
}

// checkAccess makes the cheapest authenticated call there is.
func checkAccess(ctx context.Context, c *godo.Client) error {
	_, _, err := c.Account.Get(cloudapi.WithOperation(ctx, "account.get"))
	return err
}

// listDroplets reads every droplet, 200 at a time.
func listDroplets(ctx context.Context, c *godo.Client) ([]godo.Droplet, error) {
	return listAll(ctx, "droplets", c.Droplets.List)
}

// listAll reads every page of a list endpoint, 200 items at a time,
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
func listAll[T any](ctx context.Context, what string, list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error)) ([]T, error) {
	ctx = cloudapi.WithOperation(ctx, what+".list")
	total := 0
	all, err := cloudapi.Pager[T]{
		Start:    cloudapi.PageNumber(1),
		MaxPages: maxListPages,
		Fetch: func(ctx context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
			page, resp, err := list(ctx, &godo.ListOptions{Page: at.Page(), PerPage: listPageSize})
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
	}.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	if len(all) != total {
		return nil, fmt.Errorf("listing %s: malformed response: %d listed, meta.total says %d", what, len(all), total)
	}
	return all, nil
}
