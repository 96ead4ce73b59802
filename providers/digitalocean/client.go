package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"mime"
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

// isAPINotFound reports whether err is the API's own 404: a JSON error
// body, as DigitalOcean sends ({"id":"not_found",...}). A 404 page from a
// proxy or a wrong DO_OVERRIDE_URL path is text or HTML and does not count.
// Callers use it only for requests that named one resource.
func isAPINotFound(err error) bool {
	var e *godo.ErrorResponse
	if !errors.As(err, &e) || e.Response == nil || e.Response.StatusCode != http.StatusNotFound {
		return false
	}
	mt, _, _ := mime.ParseMediaType(e.Response.Header.Get("Content-Type"))
	return mt == "application/json"
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
// following links.pages.next. Any failure fails the whole list: a partial
// list must never make a droplet look deleted or a resource look missing
// (and get created twice). what names the resource, and the operation
// ("<what>.list") for metrics and logs.
func listAll[T any](ctx context.Context, what string, list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error)) ([]T, error) {
	ctx = cloudapi.WithOperation(ctx, what+".list")
	opt := &godo.ListOptions{Page: 1, PerPage: listPageSize}
	var all []T
	for {
		if opt.Page > maxListPages {
			return nil, fmt.Errorf("listing %s: more than %d pages", what, maxListPages)
		}
		page, resp, err := list(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("listing %s (page %d): %w", what, opt.Page, err)
		}
		all = append(all, page...)
		if resp == nil || resp.Links == nil || resp.Links.IsLastPage() {
			return all, nil
		}
		if len(page) == 0 {
			return nil, fmt.Errorf("listing %s: page %d is empty but links to a next page", what, opt.Page)
		}
		opt.Page++
	}
}
