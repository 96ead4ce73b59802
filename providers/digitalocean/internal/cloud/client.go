package cloud

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
//   - the token is added per request, so a rotated token file applies at
//     once, and only for the API's own host;
//   - only the API's own 404 for the one resource a request named is an
//     authoritative not-found (IsNotFound); a 401, a 5xx, a timeout or a
//     proxy's HTML 404 is an error, so nothing is deleted on it.

// ProviderName is the --cloud-provider value, the providerID scheme
// ("digitalocean://123") and the name the API client reports itself by.
// It MUST NOT change: the providerID is immutable and every existing Node
// carries it.
const ProviderName = "digitalocean"

// DefaultAPIURL is the DigitalOcean API's base URL.
const DefaultAPIURL = "https://api.digitalocean.com/"

// NewClient returns a godo client for the API at base over hc, sending the
// token (revealed per request, so a rotated token file applies at once)
// only to base's host. setting names where base comes from, for the error
// of a base that is no URL; the error never quotes it (it may hold
// user:password).
func NewClient(hc *http.Client, base, setting string, token func() (string, error)) (*godo.Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid URL", setting)
	}
	c, err := godo.New(cloudapi.WithBearerToken(hc, u.Host, token), godo.SetBaseURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("building the DigitalOcean client: %w", err)
	}
	return c, nil
}

// StatusOf returns the HTTP status of an API error answer, 0 for any other
// error (a timeout, a refused connection).
func StatusOf(err error) int {
	var e *godo.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// notFound is DigitalOcean's "no such resource": a 404 whose JSON error
// body has the id "not_found" ({"id":"not_found","message":...}).
var notFound = cloudapi.NotFoundRule{Condition: cloudapi.FieldEquals("not_found", "id")}

// IsNotFound reports whether err is the API's own 404 for the one
// resource a request named (see cloudapi.NotFoundRule): a 404 page from a
// proxy or a wrong base URL path does not count. Callers use it only for
// requests that named one resource.
func IsNotFound(err error) bool {
	var e *godo.ErrorResponse
	return errors.As(err, &e) && notFound.IsNotFound(cloudapi.OneResource, cloudapi.AnswerOf(e.Response))
}

// CheckAccess makes the cheapest authenticated call there is.
func CheckAccess(ctx context.Context, c *godo.Client) error {
	_, _, err := c.Account.Get(cloudapi.WithOperation(ctx, "account.get"))
	return err
}
