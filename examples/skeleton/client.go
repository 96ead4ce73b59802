package skeleton

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/intern"
)

// This file is the Skeleton Cloud "SDK": a small typed client for the API
// that skeletonsim documents. A real provider replaces it with its cloud's
// SDK, built on the *http.Client the framework hands to Init, and keeps the
// error mapping rules below:
//
//   - an authoritative "does not exist" wraps framework.ErrNotFound, and
//     nothing else does: not a wrong URL, a proxy's 404, a 404 from a list
//     call, a 401 or a timeout. Any of those taken for a deleted VM would
//     make the node lifecycle controller delete a healthy Node;
//   - "busy, ask again later" wraps framework.ErrProvisioning;
//   - everything else says what failed and how, without headers or secrets;
//   - a malformed response is an error, never a panic.

const (
	maxResponseBytes = 8 << 20
	listPageSize     = 200    // the API's maximum
	maxListPages     = 10_000 // a server that never ends a list is broken
)

// Skeleton Cloud API objects, as the JSON says them.
type (
	instance struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Type        string `json:"type"`
		Region      string `json:"region"`
		Zone        string `json:"zone"`
		Status      string `json:"status"`
		PrivateIPv4 string `json:"private_ipv4"`
		PublicIPv4  string `json:"public_ipv4"`
		PublicIPv6  string `json:"public_ipv6"`
		// missing lists the keys the answer left out (json.go).
		missing []string
	}
	loadBalancer struct {
		ID string `json:"id"`
		lbSpec
		Status       string `json:"status"`
		ErrorMessage string `json:"error_message"`
		IPv4         string `json:"ipv4"`
	}
	lbSpec struct {
		Name          string      `json:"name"`
		Algorithm     string      `json:"algorithm"`
		Listeners     []listener  `json:"listeners"`
		HealthCheck   healthCheck `json:"health_check"`
		ProxyProtocol bool        `json:"proxy_protocol"`
		Members       []string    `json:"members"`
		Tags          []string    `json:"tags"`
	}
	listener struct {
		Protocol   string `json:"protocol"`
		Port       int    `json:"port"`
		TargetPort int    `json:"target_port"`
	}
	healthCheck struct {
		Protocol        string `json:"protocol"`
		Port            int    `json:"port"`
		Path            string `json:"path,omitempty"`
		IntervalSeconds int    `json:"interval_seconds"`
	}
	route struct {
		ID string `json:"id"`
		routeSpec
	}
	routeSpec struct {
		DestinationCIDR  string   `json:"destination_cidr"`
		TargetInstanceID string   `json:"target_instance_id"`
		Tags             []string `json:"tags"`
	}
)

// Statuses the API reports.
const (
	instanceStopped = "stopped"
	lbActive        = "active"
	lbProvisioning  = "provisioning"
	lbError         = "error"
)

// client talks to one Skeleton Cloud API endpoint.
type client struct {
	base *url.URL
	http *http.Client
	// members holds each distinct member list of the load balancers
	// once: every load balancer of a cluster lists the same nodes, and
	// the pipeline's shared list holds them all (framework/intern).
	members intern.Slices[string]
}

// newClient returns a client for apiURL that sends requests through hc (the
// framework's cloudapi client: rate limit, retries, metrics) and
// authenticates each one with token.
func newClient(apiURL string, hc *http.Client, token config.Secret) (*client, error) {
	base, err := url.Parse(apiURL)
	if err != nil {
		return nil, errors.New("SKELETON_API_URL: not a valid URL")
	}
	// The token is revealed per request, so a rotated SKELETON_TOKEN_FILE
	// applies at once, and is sent only to the API's own host.
	return &client{base: base, http: cloudapi.WithBearerToken(hc, base.Host, token.Reveal)}, nil
}

// apiError is an error answer from the API.
type apiError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
	// answer is what the API answered, for the not-found rule.
	answer cloudapi.Answer
	// resource: the request named one resource (GET /v1/instances/{id}),
	// so a not-found answer is about that resource. A 404 from a list call
	// says nothing about any instance.
	resource bool
}

func (e *apiError) Error() string {
	return fmt.Sprintf("skeleton API %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// notFound is Skeleton Cloud's "no such resource": a 404 whose JSON error
// body has the code "not_found" ({"error":{"code":"not_found",...}}).
// Another cloud changes only the condition (see cloudapi.NotFoundRule).
var notFound = cloudapi.NotFoundRule{Condition: cloudapi.FieldEquals("not_found", "error", "code")}

// Unwrap makes the API's own not-found answer to a request that named one
// resource an authoritative framework.ErrNotFound.
func (e *apiError) Unwrap() error {
	target := cloudapi.Collection
	if e.resource {
		target = cloudapi.OneResource
	}
	if notFound.IsNotFound(target, e.answer) {
		return framework.ErrNotFound
	}
	return nil
}

// aboutResource marks an API error as the answer about the one resource
// the request named.
func aboutResource(err error) error {
	var e *apiError
	if errors.As(err, &e) {
		e.resource = true
	}
	return err
}

func isStatus(err error, status int) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == status
}

// do sends one request and decodes the JSON answer into out (when not nil).
// op names the request in metrics and logs.
func (c *client) do(ctx context.Context, op, method, path string, query url.Values, in, out any) error {
	u := c.base.JoinPath(path)
	u.RawQuery = query.Encode()
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("skeleton API %s %s: encoding request: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(cloudapi.WithOperation(ctx, op), method, u.String(), body)
	if err != nil {
		return fmt.Errorf("skeleton API %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("skeleton API %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("skeleton API %s %s: reading response: %w", method, path, err)
	case len(data) > maxResponseBytes:
		return fmt.Errorf("skeleton API %s %s: response larger than %d bytes", method, path, maxResponseBytes)
	case resp.StatusCode >= 300:
		return newAPIError(method, path, cloudapi.Answer{Status: resp.StatusCode, Header: resp.Header, Body: data})
	case out == nil || resp.StatusCode == http.StatusNoContent:
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("skeleton API %s %s: malformed response: %w", method, path, err)
	}
	return nil
}

// newAPIError reads the API's error body; a body that is not one (a proxy's
// HTML page, say) leaves Code empty.
func newAPIError(method, path string, a cloudapi.Answer) *apiError {
	e := &apiError{Method: method, Path: path, Status: a.Status, Message: http.StatusText(a.Status), answer: a}
	var parsed struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(a.Body, &parsed) == nil && parsed.Error.Code != "" {
		e.Code, e.Message = parsed.Error.Code, parsed.Error.Message
	}
	return e
}

// listAll reads every page of a list endpoint whose items are under key,
// following meta.next_page through cloudapi.Pager: any failure, a next
// page pointing back or an empty page claiming more fails the whole list,
// and so do items that do not add up to meta.total: a list that came back
// short is an error, never a cloud without the rest. keep, if not nil,
// sees each item as its page is decoded, before the next page is read.
func listAll[T any](ctx context.Context, c *client, op, path, key string, query url.Values, keep func(*T)) ([]T, error) {
	q := url.Values{"per_page": {strconv.Itoa(listPageSize)}}
	for k, v := range query {
		q[k] = v
	}
	total := -1
	all, err := cloudapi.Pager[T]{
		Start:    cloudapi.PageNumber(1),
		MaxPages: maxListPages,
		Fetch: func(ctx context.Context, at cloudapi.Cursor) ([]T, cloudapi.Cursor, error) {
			q.Set("page", strconv.Itoa(at.Page()))
			var resp map[string]json.RawMessage
			if err := c.do(ctx, op, http.MethodGet, path, q, nil, &resp); err != nil {
				return nil, cloudapi.Done, err
			}
			var items []T
			var meta struct {
				NextPage int  `json:"next_page"`
				Total    *int `json:"total"`
			}
			if err := decodeList(resp, key, &items, &meta); err != nil {
				return nil, cloudapi.Done, fmt.Errorf("skeleton API GET %s: %w", path, err)
			}
			if keep != nil {
				for i := range items {
					keep(&items[i])
				}
			}
			if meta.Total != nil {
				total = *meta.Total
			}
			if meta.NextPage == 0 {
				return items, cloudapi.Done, nil
			}
			return items, cloudapi.PageNumber(meta.NextPage), nil
		},
	}.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", key, err)
	}
	if total >= 0 && len(all) != total {
		return nil, fmt.Errorf("listing %s: malformed response: %d listed, meta.total says %d", key, len(all), total)
	}
	return all, nil
}

// decodeList decodes a list page: its items under key (a list, [] for
// none; missing or null is malformed) and its meta.
func decodeList(resp map[string]json.RawMessage, key string, items, meta any) error {
	raw, ok := resp[key]
	if !ok || string(raw) == "null" {
		return fmt.Errorf("malformed response: no %q", key)
	}
	if err := json.Unmarshal(raw, items); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	if m, ok := resp["meta"]; ok {
		if err := json.Unmarshal(m, meta); err != nil {
			return fmt.Errorf("malformed response meta: %w", err)
		}
	}
	return nil
}

// getOne reads a single object wrapped as {"<key>": {...}}.
func getOne[T any](ctx context.Context, c *client, op, method, path, key string, in any) (*T, error) {
	var resp map[string]*T
	if err := c.do(ctx, op, method, path, nil, in, &resp); err != nil {
		return nil, err
	}
	if resp[key] == nil {
		return nil, fmt.Errorf("skeleton API %s %s: malformed response: no %q", method, path, key)
	}
	return resp[key], nil
}

// keepLB makes lb's member list the one equal lists share. Nothing
// modifies a member list in place (lb_diff.go compares copies), which
// sharing needs.
func (c *client) keepLB(lb *loadBalancer) {
	lb.Members = c.members.Of(lb.Members)
}

// The endpoints the provider uses.

func (c *client) listInstances(ctx context.Context) ([]instance, error) {
	return listAll[instance](ctx, c, "instances.list", "/v1/instances", "instances", nil, nil)
}

func (c *client) getInstance(ctx context.Context, id string) (*instance, error) {
	inst, err := getOne[instance](ctx, c, "instances.get", http.MethodGet, "/v1/instances/"+url.PathEscape(id), "instance", nil)
	return inst, aboutResource(err)
}

// checkAccess makes the cheapest authenticated call there is.
func (c *client) checkAccess(ctx context.Context) error {
	return c.do(ctx, "instances.list", http.MethodGet, "/v1/instances", url.Values{"per_page": {"1"}}, nil, nil)
}

func (c *client) listLoadBalancers(ctx context.Context, tag string) ([]loadBalancer, error) {
	return listAll[loadBalancer](ctx, c, "loadBalancers.list", "/v1/load-balancers", "load_balancers", url.Values{"tag": {tag}}, c.keepLB)
}

// listAllLoadBalancers reads every load balancer of the account.
func (c *client) listAllLoadBalancers(ctx context.Context) ([]loadBalancer, error) {
	return listAll[loadBalancer](ctx, c, "loadBalancers.list", "/v1/load-balancers", "load_balancers", nil, c.keepLB)
}

func (c *client) getLoadBalancer(ctx context.Context, id string) (*loadBalancer, error) {
	lb, err := getOne[loadBalancer](ctx, c, "loadBalancers.get", http.MethodGet, lbPath(id), "load_balancer", nil)
	if err == nil {
		c.keepLB(lb)
	}
	if err == nil && lb.ID != id {
		// {"load_balancer": {}} would read as one without listeners or IP.
		return nil, fmt.Errorf("loadBalancers.get %s: malformed response: the API answered with load balancer %q", id, lb.ID)
	}
	return lb, aboutResource(err)
}

func (c *client) createLoadBalancer(ctx context.Context, spec *lbSpec) (*loadBalancer, error) {
	lb, err := getOne[loadBalancer](ctx, c, "loadBalancers.create", http.MethodPost, "/v1/load-balancers", "load_balancer", spec)
	if err == nil {
		c.keepLB(lb)
	}
	return lb, err
}

// updateLoadBalancer replaces the load balancer's spec. The API refuses
// while the load balancer is provisioning: that is ErrProvisioning.
func (c *client) updateLoadBalancer(ctx context.Context, id string, spec *lbSpec) (*loadBalancer, error) {
	lb, err := getOne[loadBalancer](ctx, c, "loadBalancers.update", http.MethodPut, lbPath(id), "load_balancer", spec)
	if err == nil {
		c.keepLB(lb)
	}
	if isStatus(err, http.StatusConflict) {
		return nil, fmt.Errorf("%w: %w", framework.ErrProvisioning, err)
	}
	return lb, aboutResource(err)
}

func (c *client) deleteLoadBalancer(ctx context.Context, id string) error {
	return aboutResource(c.do(ctx, "loadBalancers.delete", http.MethodDelete, lbPath(id), nil, nil, nil))
}

func (c *client) listRoutes(ctx context.Context, tag string) ([]route, error) {
	return listAll[route](ctx, c, "routes.list", "/v1/routes", "routes", url.Values{"tag": {tag}}, nil)
}

func (c *client) createRoute(ctx context.Context, spec *routeSpec) (*route, error) {
	return getOne[route](ctx, c, "routes.create", http.MethodPost, "/v1/routes", "route", spec)
}

func (c *client) deleteRoute(ctx context.Context, id string) error {
	return aboutResource(c.do(ctx, "routes.delete", http.MethodDelete, "/v1/routes/"+url.PathEscape(id), nil, nil, nil))
}

func lbPath(id string) string { return "/v1/load-balancers/" + url.PathEscape(id) }
