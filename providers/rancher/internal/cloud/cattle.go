package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// go-rancher is the source of the Cattle types (its generated structs)
// and of how the API is spoken (schemas, their collection links, filters,
// its ApiError), but its client sends every request with a new
// http.Client on http.DefaultTransport, without a context. cattle speaks
// the API the way go-rancher's base client does, request for request,
// through the framework's client and with the caller's context: its
// deadline cancels the request, its operation names it in metrics, logs
// and the Counter, and the framework keeps its answer for the not-found
// rule. Nothing process-wide is touched: a custom CCM that links Rancher
// beside other providers keeps their transports as they are.

// errNoSchemas is the bootstrap's error for an API root without the
// X-API-Schemas header (go-rancher's "Failed to find schema").
var errNoSchemas = errors.New("no X-API-Schemas header")

// cattle is one environment's Cattle API.
type cattle struct {
	hc   *http.Client // the framework's
	root string       // CATTLE_URL, normalized as go-rancher does
	host string       // root's host[:port], the only one given the key
	// keys returns the API key as it is now (a rotated *_FILE key is
	// read at the next request).
	keys  func() (access, secret string, err error)
	types map[string]rancher.Schema
}

// bootstrap reads the API root and the schemas its X-API-Schemas header
// names, as go-rancher's NewRancherClient does.
func (c *cattle) bootstrap(ctx context.Context) error {
	header, body, err := c.call(cloudapi.WithOperation(ctx, "root.get"), http.MethodGet, c.root, nil, http.StatusOK)
	if err != nil {
		return err
	}
	schemasURL := header.Get("X-API-Schemas")
	if schemasURL == "" {
		return errNoSchemas
	}
	if schemasURL != c.root {
		if body, err = c.get(cloudapi.WithOperation(ctx, "schemas.list"), schemasURL); err != nil {
			return err
		}
	}
	var schemas rancher.Schemas
	if err := json.Unmarshal(body, &schemas); err != nil {
		return err
	}
	c.types = make(map[string]rancher.Schema, len(schemas.Data))
	for _, s := range schemas.Data {
		c.types[s.Id] = s
	}
	return nil
}

// Call is the API for one call: every request carries its context.
// Its methods are go-rancher's base client's, with its checks and URLs.
type Call struct {
	*cattle
	ctx context.Context //nolint:containedctx // the call's: the methods keep go-rancher's signatures
}

// schema returns schemaType's schema if it allows method on its
// collection (collection) or on a resource (!collection).
func (c *Call) schema(schemaType, method string, collection bool) (rancher.Schema, error) {
	s, ok := c.types[schemaType]
	if !ok {
		return s, fmt.Errorf("unknown schema type [%s]", schemaType)
	}
	methods := s.ResourceMethods
	if collection {
		methods = s.CollectionMethods
	}
	if !slices.Contains(methods, method) {
		return s, fmt.Errorf("resource type [%s] does not allow %s", schemaType, method)
	}
	return s, nil
}

// collectionURL is a schema's collection link.
func collectionURL(s rancher.Schema) (string, error) {
	u, ok := s.Links[rancher.COLLECTION]
	if !ok {
		return "", fmt.Errorf("no collection URL for [%s]", s.Id)
	}
	return u, nil
}

// ById reads the resource of schemaType with id into out.
func (c *Call) ById(schemaType, id string, out any) error { //nolint:revive // go-rancher's name
	s, err := c.schema(schemaType, http.MethodGet, false)
	if err != nil {
		return err
	}
	u, err := collectionURL(s)
	if err != nil {
		return err
	}
	return c.getInto(u+"/"+id, nil, out)
}

// List reads the first page of schemaType's collection, filtered.
func (c *Call) List(schemaType string, opts *rancher.ListOpts, out any) error {
	s, err := c.schema(schemaType, http.MethodGet, true)
	if err != nil {
		return err
	}
	u, err := collectionURL(s)
	if err != nil {
		return err
	}
	var filters map[string]any
	if opts != nil {
		filters = opts.Filters
	}
	return c.getInto(u, filters, out)
}

// GetLink reads the URL resource's link names.
func (c *Call) GetLink(resource rancher.Resource, link string, out any) error {
	u := resource.Links[link]
	if u == "" {
		return fmt.Errorf("no link %s", link)
	}
	return c.getInto(u, nil, out)
}

// Create creates a resource of schemaType in its collection.
func (c *Call) Create(schemaType string, obj, out any) error {
	s, err := c.schema(schemaType, http.MethodPost, true)
	if err != nil {
		return err
	}
	u, err := collectionURL(s)
	if err != nil {
		return err
	}
	return c.modify(http.MethodPost, u, obj, out)
}

// Update changes existing (its self link) with updates.
func (c *Call) Update(schemaType string, existing *rancher.Resource, updates, out any) error {
	if existing == nil {
		return errors.New("no resource to update")
	}
	if _, err := c.schema(schemaType, http.MethodPut, false); err != nil {
		return err
	}
	self, ok := existing.Links[rancher.SELF]
	if !ok {
		return fmt.Errorf("no self link in %s %s", existing.Type, existing.Id)
	}
	return c.modify(http.MethodPut, self, updates, out)
}

// Delete deletes existing (its self link).
func (c *Call) Delete(existing *rancher.Resource) error {
	if existing == nil {
		return nil
	}
	if _, err := c.schema(existing.Type, http.MethodDelete, false); err != nil {
		return err
	}
	self, ok := existing.Links[rancher.SELF]
	if !ok {
		return fmt.Errorf("no self link in %s %s", existing.Type, existing.Id)
	}
	_, _, err := c.call(c.ctx, http.MethodDelete, self, nil, 0)
	return err
}

// Action runs existing's action with input.
func (c *Call) Action(schemaType, action string, existing *rancher.Resource, input, out any) error {
	if existing == nil {
		return errors.New("no resource to act on")
	}
	u, ok := existing.Actions[action]
	if !ok {
		return fmt.Errorf("action %s not available on %s %s", action, existing.Type, existing.Id)
	}
	if _, ok := c.types[schemaType]; !ok {
		return fmt.Errorf("unknown schema type [%s]", schemaType)
	}
	return c.modify(http.MethodPost, u, input, out)
}

// getInto GETs u with filters (go-rancher's appendFilters) into out.
func (c *Call) getInto(u string, filters map[string]any, out any) error {
	if len(filters) > 0 {
		parsed, err := url.Parse(u)
		if err != nil {
			return err
		}
		q := parsed.Query()
		for k, v := range filters {
			if l, ok := v.([]string); ok {
				for _, s := range l {
					q.Add(k, s)
				}
				continue
			}
			q.Add(k, fmt.Sprint(v))
		}
		parsed.RawQuery = q.Encode()
		u = parsed.String()
	}
	body, err := c.get(c.ctx, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("malformed response from %s: %w", redactedURL(u), err)
	}
	return nil
}

// modify sends obj as JSON with method to u and decodes the answer, if
// any, into out.
func (c *Call) modify(method, u string, obj, out any) error {
	if obj == nil {
		obj = map[string]string{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, body, err := c.call(c.ctx, method, u, b, 0)
	if err != nil || len(body) == 0 || out == nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("malformed response from %s: %w", redactedURL(u), err)
	}
	return nil
}

// get GETs u and returns the body of its 200.
func (c *cattle) get(ctx context.Context, u string) ([]byte, error) {
	_, body, err := c.call(ctx, http.MethodGet, u, nil, http.StatusOK)
	return body, err
}

// call makes one request with the key as Basic auth, only to CATTLE_URL's
// host (a link in an answer pointing elsewhere gets no key), and returns
// the answer's header and body, or go-rancher's ApiError for a status
// other than want (0: any below 300).
func (c *cattle) call(ctx context.Context, method, u string, body []byte, want int) (http.Header, []byte, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, nil, err
	}
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	if req.URL.Host != c.host {
		return nil, nil, fmt.Errorf("refusing to send the API key to %s, which is not CATTLE_URL's host %s (a link in a Cattle answer points elsewhere)", req.URL.Host, c.host)
	}
	access, secret, err := c.keys()
	if err != nil {
		return nil, nil, err
	}
	req.SetBasicAuth(access, secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	ok := resp.StatusCode == want || want == 0 && resp.StatusCode < 300
	switch {
	case ok && err == nil:
		return resp.Header, got, nil
	case ok:
		return nil, nil, err
	}
	return nil, nil, apiError(resp, got, err, u)
}

// apiError is go-rancher's ApiError for an answer: Body holds a JSON error
// body's members other than id, links, actions, type and status as
// "key=value, ..." (how API.NotFound recognizes Cattle's own 404), any
// other body as it is. The URL is redacted.
func apiError(resp *http.Response, body []byte, readErr error, u string) *rancher.ApiError {
	text := string(body)
	if readErr != nil {
		text = "Unreadable body."
	}
	data := map[string]any{}
	if readErr == nil && json.Unmarshal(body, &data) == nil {
		for _, k := range []string{"id", "links", "actions", "type", "status"} {
			delete(data, k)
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if data[k] != nil {
				parts = append(parts, fmt.Sprintf("%s=%v", k, data[k]))
			}
		}
		text = strings.Join(parts, ", ")
	}
	u = redactedURL(u)
	return &rancher.ApiError{StatusCode: resp.StatusCode, Status: resp.Status, Body: text, Url: u,
		Msg: fmt.Sprintf("Bad response statusCode [%d]. Status [%s]. Body: [%s] from [%s]", resp.StatusCode, resp.Status, text, u)}
}
