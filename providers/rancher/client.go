package rancher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file connects to the Cattle API (cattle.go speaks it) and holds
// the rules every call follows:
//
//   - every call goes through api.do, with a context: its deadline
//     (--instance-lookup-timeout, --cloud-init-timeout) cancels the
//     request, and its operation names it;
//   - only Cattle's own 404 ({"type":"error","code":"Not Found"}, JSON)
//     to a request naming one resource is an authoritative not-found
//     (byID, api.notFound);
//   - a malformed answer (a resource without its id, a collection without
//     data) is an error, never a panic.

// api is the Cattle client and what Init learned about the environment.
type api struct {
	cattle *cattle
	url    string // CATTLE_URL as go-rancher normalizes it, redacted
}

// exampleURL is what an environment's API URL looks like, for errors.
const exampleURL = "http://rancher.example.com:8080/v2-beta/projects/1a5"

// requiredTypes are the Cattle types the instances use; an API without
// them is not an environment's (project's) API. (The load-balancer half
// checks its own.)
var requiredTypes = []string{rancher.HOST_TYPE, rancher.IP_ADDRESS_TYPE}

// connect builds the client for cfg and checks it against the API: the
// root and schemas (go-rancher's bootstrap), then that the API is an
// environment's. Every error names the variable to check and holds no
// secret.
func connect(ctx context.Context, cfg *Config, env *framework.Env) (*api, error) {
	u, err := cfg.apiURL()
	if err != nil {
		return nil, err
	}
	if _, err := cfg.AccessKey.Reveal(); err != nil {
		return nil, fmt.Errorf("CATTLE_ACCESS_KEY: %w", err)
	}
	if _, err := cfg.SecretKey.Reveal(); err != nil {
		return nil, fmt.Errorf("CATTLE_SECRET_KEY: %w", err)
	}
	normalized, err := rancher.NormalizeUrl(u.String())
	if err != nil {
		return nil, errors.New("CATTLE_URL: not a valid URL")
	}
	root, err := url.Parse(normalized)
	if err != nil {
		return nil, errors.New("CATTLE_URL: not a valid URL")
	}
	c := &cattle{hc: env.HTTPClient, root: normalized, host: root.Host, keys: func() (string, string, error) {
		access, err := cfg.AccessKey.Reveal()
		if err != nil {
			return "", "", fmt.Errorf("CATTLE_ACCESS_KEY: %w", err)
		}
		secret, err := cfg.SecretKey.Reveal()
		if err != nil {
			return "", "", fmt.Errorf("CATTLE_SECRET_KEY: %w", err)
		}
		return access, secret, nil
	}}
	a := &api{cattle: c, url: redactedURL(normalized)}
	if err := c.bootstrap(ctx); err != nil {
		return nil, a.connectError(ctx, err)
	}
	for _, t := range requiredTypes {
		if _, ok := c.types[t]; !ok {
			return nil, fmt.Errorf("CATTLE_URL: the Cattle API at %s has no %q type: it is not an environment's API; use the URL Rancher shows with an environment API key, such as %s", a.url, t, exampleURL)
		}
	}
	return a, nil
}

// connectError turns a failed bootstrap into an error naming the variable
// to check.
func (a *api) connectError(ctx context.Context, err error) error {
	var apiErr *rancher.ApiError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("connecting to the Cattle API at %s (CATTLE_URL): %w", a.url, context.Cause(ctx))
	case errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden):
		return fmt.Errorf("CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API at %s refused the API key (%s): check both, and that the key is an environment API key of this environment", a.url, apiErr.Status)
	case errors.As(err, &apiErr):
		return fmt.Errorf("CATTLE_URL: %s answered %s: it is not a Cattle environment's API (an environment's URL looks like %s)", a.url, apiErr.Status, exampleURL)
	case errors.Is(err, errNoSchemas):
		return fmt.Errorf("CATTLE_URL: %s is not a Cattle environment's API: its answer has no X-API-Schemas header (an environment's URL looks like %s)", a.url, exampleURL)
	case isJSONError(err):
		return fmt.Errorf("CATTLE_URL: %s is not a Cattle API: malformed schemas: %w", a.url, err)
	}
	return fmt.Errorf("CATTLE_URL: cannot reach the Cattle API at %s: %w", a.url, err)
}

func isJSONError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

// do runs fn with the API for one call: its requests carry ctx, named op
// in metrics, logs and the Counter.
func (a *api) do(ctx context.Context, op string, fn func(c *cattleCall) error) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	err := fn(&cattleCall{cattle: a.cattle, ctx: cloudapi.WithOperation(ctx, op)})
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Cause(ctx)) {
		// The context ended the request: say why.
		return fmt.Errorf("%w (%w)", err, context.Cause(ctx))
	}
	return err
}

// notFoundRule is Cattle's "no such resource": a 404 with its JSON error
// body, {"type":"error","status":404,"code":"Not Found","message":"Not
// Found",...}. Cattle (v0.183, Rancher 1.6) raises it with the status
// only, and its ExceptionHandler takes the code from the status's line
// of api/messages.properties ("404=Not Found"; IaasApiConfig.java);
// gdapi's own name for it, NotFound, is accepted too.
var notFoundRule = cloudapi.NotFoundRule{Condition: func(status int, body []byte) bool {
	return cloudapi.FieldEquals("error", "type")(status, body) &&
		(cloudapi.FieldEquals(cattleNotFound, "code")(status, body) || cloudapi.FieldEquals(gdapiNotFound, "code")(status, body))
}}

// The code of Cattle's 404 error body, and gdapi's name for it.
const (
	cattleNotFound = "Not Found"
	gdapiNotFound  = "NotFound"
)

// notFoundError marks Cattle's authoritative 404 for the one resource a
// call named.
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// notFound reports whether err is Cattle's own 404 for the one resource a
// request named. For an error from byID (or another call made with
// api.do and classified there) the answer's media type and body were
// checked; for a go-rancher *ApiError from a typed call (Update, Delete,
// an action on one resource) only what go-rancher kept can be: the status
// and the body's code (go-rancher turns the JSON body into
// "code=Not Found, message=..."; a proxy's page stays as it was). A 404 to
// a list, a 401, a 5xx or a timeout is never a not-found.
func (a *api) notFound(err error) bool {
	var nf *notFoundError
	if errors.As(err, &nf) {
		return true
	}
	var apiErr *rancher.ApiError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		return false
	}
	for part := range strings.SplitSeq(apiErr.Body, ", ") {
		if part == "code="+cattleNotFound || part == "code="+gdapiNotFound {
			return true
		}
	}
	return false
}

// byID reads the resource of type schemaType with the ID id into a new T.
// Cattle's own 404 is an error a.notFound reports (go-rancher's base ById,
// unlike the typed ones, returns it); any other failure is an error, and
// an answer without the resource's ID is a malformed one.
func byID[T any](ctx context.Context, a *api, op, schemaType, id string) (*T, error) {
	if id == "" || strings.ContainsAny(id, "/?#%") {
		return nil, fmt.Errorf("%q is not a Cattle %s ID", id, schemaType)
	}
	ctx, rec := cloudapi.RecordAnswers(ctx)
	out := new(T)
	err := a.do(ctx, op, func(c *cattleCall) error { return c.ById(schemaType, id, out) })
	if err != nil {
		if ans, ok := rec.Last(); ok && notFoundRule.IsNotFound(cloudapi.OneResource, ans) {
			return nil, &notFoundError{err: fmt.Errorf("%s %s: %w", schemaType, id, framework.ErrNotFound)}
		}
		return nil, fmt.Errorf("getting %s %s: %w", schemaType, id, err)
	}
	if got := resourceID(out); got != id {
		return nil, fmt.Errorf("getting %s %s: malformed response: the API answered with %s %q", schemaType, id, schemaType, got)
	}
	return out, nil
}

// collection is one page of a Cattle collection of T.
type collection[T any] struct {
	rancher.Collection
	Data []T `json:"data"`
}

// listAll reads every page of the collection of schemaType that filters
// select (pagination.next, through cloudapi.Pager: a partial list is an
// error, never a shorter list). limit, when > 0, is the page size asked
// for.
func listAll[T any](ctx context.Context, a *api, op, schemaType string, filters map[string]any, limit int) ([]T, error) {
	f := make(map[string]any, len(filters)+1)
	for k, v := range filters {
		f[k] = v
	}
	if limit > 0 {
		f["limit"] = limit
	}
	var all []T
	err := a.do(ctx, op, func(c *cattleCall) error {
		var err error
		all, err = cloudapi.Pager[T]{
			Start: cloudapi.PageNumber(1),
			Fetch: func(_ context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
				page := &collection[T]{}
				var err error
				if at.Link() == "" {
					err = c.List(schemaType, &rancher.ListOpts{Filters: f}, page)
				} else {
					err = c.GetLink(rancher.Resource{Links: map[string]string{"next": at.Link()}}, "next", page)
				}
				if err != nil {
					return nil, cloudapi.Done, err
				}
				if page.Data == nil {
					// Cattle sends "data" in every collection, [] for
					// none: without it, an empty list would say that
					// nothing exists.
					return nil, cloudapi.Done, errors.New("malformed response: not a collection, or one without data")
				}
				if page.Pagination == nil {
					return page.Data, cloudapi.Done, nil
				}
				return page.Data, cloudapi.Link(page.Pagination.Next), nil
			},
		}.All(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", schemaType, err)
	}
	return all, nil
}

// getLink reads the collection a resource's link names (a host's
// ipAddresses), every page of it.
func getLink[T any](ctx context.Context, a *api, op string, r rancher.Resource, link string) ([]T, error) {
	u := r.Links[link]
	if u == "" {
		return nil, fmt.Errorf("malformed response: %s %s has no %s link", r.Type, r.Id, link)
	}
	var all []T
	err := a.do(ctx, op, func(c *cattleCall) error {
		var err error
		all, err = cloudapi.Pager[T]{
			Start: cloudapi.Link(u),
			Fetch: func(_ context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
				page := &collection[T]{}
				if err := c.GetLink(rancher.Resource{Links: map[string]string{"at": at.Link()}}, "at", page); err != nil {
					return nil, cloudapi.Done, err
				}
				if page.Pagination == nil {
					return page.Data, cloudapi.Done, nil
				}
				return page.Data, cloudapi.Link(page.Pagination.Next), nil
			},
		}.All(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the %s of %s %s: %w", link, r.Type, r.Id, err)
	}
	return all, nil
}

// resourceID returns the id of a go-rancher resource type (a struct
// embedding rancher.Resource), or "" for any other value.
func resourceID(v any) string {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return ""
	}
	f := rv.FieldByName("Resource")
	if !f.IsValid() {
		return ""
	}
	r, ok := f.Interface().(rancher.Resource)
	if !ok {
		return ""
	}
	return r.Id
}

// redactedURL is a URL as logs and errors may show it.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return cloudapi.RedactURL(u)
}

// removed reports whether Cattle reports a resource (a host, a service, a
// stack) as no longer existing: removed, purging or purged, or with its
// removed time set. One being removed still exists. A removed time that is
// no time (the schemas' type is date) is a malformed response: read as
// set, it would make a live resource gone, a host's Node deleted or a
// load balancer made again.
func removed(kind, id, state, removedAt string) (bool, error) {
	switch state {
	case stateRemoved, statePurging, statePurged:
		return true, nil
	}
	if removedAt == "" {
		return false, nil
	}
	if _, err := time.Parse(time.RFC3339, removedAt); err != nil {
		return false, fmt.Errorf("malformed response: %s %s was removed at %q", kind, id, removedAt)
	}
	return true, nil
}
