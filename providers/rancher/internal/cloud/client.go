package cloud

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

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// This file connects to the Cattle API (cattle.go speaks it) and holds
// the rules every call follows:
//
//   - every call goes through API.Do, with a context: its deadline
//     (the CCM's --instance-lookup-timeout, --cloud-init-timeout; a CSI
//     call's) cancels the request, and its operation names it;
//   - only Cattle's own 404 ({"type":"error","code":"Not Found"}, JSON)
//     to a request naming one resource is an authoritative not-found
//     (ByID, API.NotFound);
//   - a malformed answer (a resource without its id, a collection without
//     data) is an error, never a panic.

// ProviderName is the provider's name: the CCM's --cloud-provider and
// providerID scheme (rancher.ProviderName, which must not change), and
// the provider label of both binaries' Cattle API metrics.
const ProviderName = "rancher"

// API is the Cattle client and what Connect learned about the
// environment.
type API struct {
	cattle *cattle
	// URL is CATTLE_URL as go-rancher normalizes it, redacted: what logs
	// and errors show.
	URL string
	// errNotFound is the sentinel Cattle's own 404 for one resource wraps
	// (ByID): the caller's framework's.
	errNotFound error
}

// ExampleURL is what an environment's API URL looks like, for errors.
const ExampleURL = "http://rancher.example.com:8080/v2-beta/projects/1a5"

// Credentials are the settings Connect takes: the CCM's and the CSI
// controller's CATTLE_URL, CATTLE_ACCESS_KEY and CATTLE_SECRET_KEY.
type Credentials struct {
	URL       string
	AccessKey config.Secret
	SecretKey config.Secret
}

// requiredTypes are the Cattle types the CCM's instances use; an API
// without them is not an environment's (project's) API, for either
// binary. (The load-balancer half and the CSI driver check their own.)
var requiredTypes = []string{rancher.HOST_TYPE, rancher.IP_ADDRESS_TYPE}

// Connect builds the client for cfg and checks it against the API: the
// root and schemas (go-rancher's bootstrap), then that the API is an
// environment's. Every error names the variable to check and holds no
// secret. hc is the caller's HTTP client (the framework's, from
// framework/cloudapi); errNotFound is the sentinel Cattle's own 404 for
// one resource wraps, the caller's framework's (framework.ErrNotFound for
// the CCM, csi.ErrNotFound for the CSI driver; this package imports
// neither).
func Connect(ctx context.Context, cfg *Credentials, hc *http.Client, errNotFound error) (*API, error) {
	u, err := ParseURL(cfg.URL)
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
	c := &cattle{hc: hc, root: normalized, host: root.Host, keys: func() (string, string, error) {
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
	a := &API{cattle: c, URL: redactedURL(normalized), errNotFound: errNotFound}
	if err := c.bootstrap(ctx); err != nil {
		return nil, a.connectError(ctx, err)
	}
	for _, t := range requiredTypes {
		if _, ok := c.types[t]; !ok {
			return nil, fmt.Errorf("CATTLE_URL: the Cattle API at %s has no %q type: it is not an environment's API; use the URL Rancher shows with an environment API key, such as %s", a.URL, t, ExampleURL)
		}
	}
	return a, nil
}

// ParseURL returns CATTLE_URL parsed: an http(s) URL with a host and no
// query or fragment. Errors show it redacted (it could hold
// user:password).
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("CATTLE_URL: required: the environment's API URL, such as " + ExampleURL)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// Not err itself: it quotes the URL.
		return nil, errors.New("CATTLE_URL: not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, fmt.Errorf("CATTLE_URL: %s is not an http(s) URL", cloudapi.RedactURL(u))
	case u.User != nil:
		return nil, fmt.Errorf("CATTLE_URL: %s holds credentials: give them as CATTLE_ACCESS_KEY and CATTLE_SECRET_KEY", cloudapi.RedactURL(u))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("CATTLE_URL: %s has a query or fragment", cloudapi.RedactURL(u))
	}
	return u, nil
}

// HasType reports whether the API has the Cattle type t (its schema).
func (a *API) HasType(t string) bool {
	_, ok := a.cattle.types[t]
	return ok
}

// connectError turns a failed bootstrap into an error naming the variable
// to check.
func (a *API) connectError(ctx context.Context, err error) error {
	var apiErr *rancher.ApiError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("connecting to the Cattle API at %s (CATTLE_URL): %w", a.URL, context.Cause(ctx))
	case errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden):
		return fmt.Errorf("CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY: the Cattle API at %s refused the API key (%s): check both, and that the key is an environment API key of this environment", a.URL, apiErr.Status)
	case errors.As(err, &apiErr):
		return fmt.Errorf("CATTLE_URL: %s answered %s: it is not a Cattle environment's API (an environment's URL looks like %s)", a.URL, apiErr.Status, ExampleURL)
	case errors.Is(err, errNoSchemas):
		return fmt.Errorf("CATTLE_URL: %s is not a Cattle environment's API: its answer has no X-API-Schemas header (an environment's URL looks like %s)", a.URL, ExampleURL)
	case isJSONError(err):
		return fmt.Errorf("CATTLE_URL: %s is not a Cattle API: malformed schemas: %w", a.URL, err)
	}
	return fmt.Errorf("CATTLE_URL: cannot reach the Cattle API at %s: %w", a.URL, err)
}

func isJSONError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

// Do runs fn with the API for one call: its requests carry ctx, named op
// in metrics, logs and the Counter.
func (a *API) Do(ctx context.Context, op string, fn func(c *Call) error) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	err := fn(&Call{cattle: a.cattle, ctx: cloudapi.WithOperation(ctx, op)})
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

// NotFound reports whether err is Cattle's own 404 for the one resource a
// request named. For an error from ByID (or another call made with
// API.Do and classified there) the answer's media type and body were
// checked; for a go-rancher *ApiError from a typed call (Update, Delete,
// an action on one resource) only what go-rancher kept can be: the status
// and the body's code (go-rancher turns the JSON body into
// "code=Not Found, message=..."; a proxy's page stays as it was). A 404 to
// a list, a 401, a 5xx or a timeout is never a not-found.
func (a *API) NotFound(err error) bool {
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

// ByID reads the resource of type schemaType with the ID id into a new T.
// Cattle's own 404 is an error a.NotFound reports, wrapping the sentinel
// Connect was given (go-rancher's base ById, unlike the typed ones,
// returns it); any other failure is an error, and an answer without the
// resource's ID is a malformed one.
func ByID[T any](ctx context.Context, a *API, op, schemaType, id string) (*T, error) {
	if id == "" || strings.ContainsAny(id, "/?#%") {
		return nil, fmt.Errorf("%q is not a Cattle %s ID", id, schemaType)
	}
	ctx, rec := cloudapi.RecordAnswers(ctx)
	out := new(T)
	err := a.Do(ctx, op, func(c *Call) error { return c.ById(schemaType, id, out) })
	if err != nil {
		if ans, ok := rec.Last(); ok && notFoundRule.IsNotFound(cloudapi.OneResource, ans) {
			return nil, &notFoundError{err: fmt.Errorf("%s %s: %w", schemaType, id, a.errNotFound)}
		}
		return nil, fmt.Errorf("getting %s %s: %w", schemaType, id, err)
	}
	if got := ResourceID(out); got != id {
		return nil, fmt.Errorf("getting %s %s: malformed response: the API answered with %s %q", schemaType, id, schemaType, got)
	}
	return out, nil
}

// Collection is one page of a Cattle collection of T.
type Collection[T any] struct {
	rancher.Collection
	Data []T `json:"data"`
}

// ListAll reads every page of the collection of schemaType that filters
// select (pagination.next, through cloudapi.Pager: a partial list is an
// error, never a shorter list). limit, when > 0, is the page size asked
// for.
func ListAll[T any](ctx context.Context, a *API, op, schemaType string, filters map[string]any, limit int) ([]T, error) {
	f := make(map[string]any, len(filters)+1)
	for k, v := range filters {
		f[k] = v
	}
	if limit > 0 {
		f["limit"] = limit
	}
	var all []T
	err := a.Do(ctx, op, func(c *Call) error {
		var err error
		all, err = cloudapi.Pager[T]{
			Start: cloudapi.PageNumber(1),
			Fetch: func(_ context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
				page := &Collection[T]{}
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

// CreateResource POSTs obj as a new resource of schemaType and returns
// Cattle's answer, which must have an id.
func CreateResource[T any](ctx context.Context, a *API, op, schemaType string, obj any) (*T, error) {
	out := new(T)
	if err := a.Do(ctx, op, func(c *Call) error { return c.Create(schemaType, obj, out) }); err != nil {
		return nil, err
	}
	if ResourceID(out) == "" {
		return nil, fmt.Errorf("creating a %s: malformed response: no id", schemaType)
	}
	return out, nil
}

// GetLink reads the collection a resource's link names (a host's
// ipAddresses), every page of it.
func GetLink[T any](ctx context.Context, a *API, op string, r rancher.Resource, link string) ([]T, error) {
	u := r.Links[link]
	if u == "" {
		return nil, fmt.Errorf("malformed response: %s %s has no %s link", r.Type, r.Id, link)
	}
	var all []T
	err := a.Do(ctx, op, func(c *Call) error {
		var err error
		all, err = cloudapi.Pager[T]{
			Start: cloudapi.Link(u),
			Fetch: func(_ context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
				page := &Collection[T]{}
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

// ResourceID returns the id of a go-rancher resource type (a struct
// embedding rancher.Resource), or "" for any other value.
func ResourceID(v any) string {
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

// Cattle's states of a resource that is going or gone (hosts, services,
// stacks and volumes alike).
const (
	// StateRemoving is a resource being removed: it still exists.
	StateRemoving = "removing"
	stateRemoved  = "removed"
	statePurging  = "purging"
	statePurged   = "purged"
)

// Removed reports whether Cattle reports a resource (a host, a service, a
// stack, a volume) as no longer existing: removed, purging or purged, or
// with its removed time set. One being removed still exists. A removed
// time that is no time (the schemas' type is date) is a malformed
// response: read as set, it would make a live resource gone, a host's
// Node deleted or a load balancer made again.
func Removed(kind, id, state, removedAt string) (bool, error) {
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
