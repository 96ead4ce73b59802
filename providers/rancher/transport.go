package rancher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// go-rancher takes no *http.Client and no context: every request it makes
// is sent by a new &http.Client{Timeout: ClientOpts.Timeout} on
// http.DefaultTransport, with the ClientOpts' keys as Basic auth. So that
// its requests still go through the framework's transport (rate limit,
// retries, metrics, redacted logs) and carry the caller's context, this
// file installs, once per process, a router as http.DefaultTransport:
//
//   - go-rancher is never given the API key. Its ClientOpts carry a
//     random token ("ccmkit-rancher-<hex>") as the access key instead;
//     the router finds the provider by that token, and sends the request
//     through that provider's framework transport with the real key (read
//     at that moment, so a rotated *_FILE key applies at the next request);
//   - a token belongs to one client (the long-lived one, for the typed
//     calls the load-balancer half makes) or to one call (api.do): a call's
//     request carries the call's context, so its deadline cancels it, its
//     operation names it in metrics and the Counter, and the framework
//     keeps its answer for the not-found rule;
//   - the key goes only to CATTLE_URL's host: a link to any other host is
//     refused, not sent;
//   - every other request (no token: another library's) goes to the
//     DefaultTransport the router replaced, unchanged.
//
// The side effect the lead must know: after a Rancher provider starts,
// http.DefaultTransport is no longer an *http.Transport (code that
// type-asserts it, to clone it, gets the router; it still works through
// it). originalTransport keeps the replaced one for the framework
// transport's base.

// tokenPrefix starts every token the router hands out.
const tokenPrefix = "ccmkit-rancher-" //nolint:gosec // a prefix of the random tokens the router hands out, not a credential

var (
	installOnce sync.Once
	theRouter   *router
)

// defaultRouter returns the router, installing it as http.DefaultTransport
// on first use.
func defaultRouter() *router {
	installOnce.Do(func() {
		theRouter = &router{fallback: http.DefaultTransport, bindings: map[string]binding{}}
		http.DefaultTransport = theRouter
	})
	return theRouter
}

// originalTransport returns a clone of the DefaultTransport the router
// replaced, for a framework transport's base (the router itself would send
// every request through one more hop).
func originalTransport() http.RoundTripper {
	r := defaultRouter()
	if t, ok := r.fallback.(*http.Transport); ok {
		return t.Clone()
	}
	return r.fallback
}

// route is where one provider's requests go.
type route struct {
	host string            // CATTLE_URL's host[:port], the only one given the key
	next http.RoundTripper // the framework's transport
	// keys returns the API key as it is now.
	keys func() (access, secret string, err error)
}

// binding is what a token stands for: a route, and for a call's token the
// call's context.
type binding struct {
	route *route
	ctx   context.Context //nolint:containedctx // the context of one call, for the requests go-rancher makes without one
}

type router struct {
	fallback http.RoundTripper
	mu       sync.RWMutex
	bindings map[string]binding
}

// bind returns a new token for rt (and ctx, for one call; nil for a
// client) and the function that forgets it.
func (r *router) bind(rt *route, ctx context.Context) (token string, release func()) { //nolint:revive // ctx is data here, not the call's own
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	token = tokenPrefix + hex.EncodeToString(b[:])
	r.mu.Lock()
	r.bindings[token] = binding{route: rt, ctx: ctx}
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		delete(r.bindings, token)
		r.mu.Unlock()
	}
}

// RoundTrip implements http.RoundTripper.
func (r *router) RoundTrip(req *http.Request) (*http.Response, error) {
	user, _, ok := req.BasicAuth()
	if !ok || !strings.HasPrefix(user, tokenPrefix) {
		return r.fallback.RoundTrip(req)
	}
	r.mu.RLock()
	b, ok := r.bindings[user]
	r.mu.RUnlock()
	if !ok {
		closeBody(req)
		return nil, errors.New("rancher: a request made after its call ended")
	}
	if req.URL.Host != b.route.host {
		closeBody(req)
		return nil, fmt.Errorf("rancher: refusing to send the API key to %s, which is not CATTLE_URL's host %s (a link in a Cattle answer points elsewhere)", req.URL.Host, b.route.host)
	}
	access, secret, err := b.route.keys()
	if err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	if b.ctx != nil {
		ctx = mergeContexts(b.ctx, req.Context())
	}
	out := req.Clone(ctx)
	out.SetBasicAuth(access, secret)
	resp, err := b.route.next.RoundTrip(out)
	if resp != nil {
		// A copy: http.Client replaces the Body of what it gets (with a
		// timer-stopping wrapper), and the framework's answer recorder
		// holds the original, whose Body keeps the error body it reads.
		cp := *resp
		resp = &cp
	}
	return resp, err
}

// mergeContexts returns call's context (its values and deadline), also
// cancelled when req's ends: go-rancher's http.Client ends req's at its
// Timeout, and once the response body is read.
func mergeContexts(call, req context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(call)
	context.AfterFunc(req, func() { cancel(context.Cause(req)) })
	return ctx
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
