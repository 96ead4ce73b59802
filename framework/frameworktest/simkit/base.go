package simkit

import (
	"net/http"
	"sync"
	"time"
)

// Base is what every simulator's Server does alike, for the Server to
// embed: it holds the simulator's Kit and ServeMux, registers endpoints
// behind the Kit (Handle) and the answer to any other path (NotFound),
// serves them on a loopback Listener, answers GET /_sim/stats and GET
// /_sim/state, and exports what the Kit counts and the Kit's fault
// controls (a fault without a Body gets the cloud's error body from
// Options.ErrorBody).
type Base struct {
	kit      *Kit
	mux      *http.ServeMux
	ln       Listener
	accounts *accounts
}

// NewBase returns the Base of a simulator whose endpoints a Kit with opts
// serves, and registers GET /_sim/stats and GET /_sim/state (state's value
// as JSON): typically simkit.NewBase(opts, s.State).
func NewBase[T any](opts Options, state func() T) Base {
	kit, mux := New(opts), http.NewServeMux()
	mux.HandleFunc("GET /_sim/stats", kit.ServeStats)
	mux.HandleFunc("GET /_sim/state", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, state())
	})
	acc := &accounts{own: mux}
	return Base{kit: kit, mux: mux, ln: NewListener(acc), accounts: acc}
}

// AddAccount serves another account of the cloud on this Base's URL, as
// the cloud serves every account on one endpoint: a request for which
// claims is true (it carries the other account's credential, or names it)
// goes to other, the Handler of a second Server of the simulator, not
// started, with the other account's credentials and state; every other
// request, unauthenticated ones included, to this Base's own endpoints.
// The second Server's IDs must not collide with this one's: a cloud's IDs
// are unique across its accounts.
func (b *Base) AddAccount(claims func(*http.Request) bool, other http.Handler) {
	b.accounts.add(claims, other)
}

// accounts routes a request to the account that claims it.
type accounts struct {
	own http.Handler

	mu     sync.RWMutex
	others []otherAccount
}

type otherAccount struct {
	claims  func(*http.Request) bool
	handler http.Handler
}

func (a *accounts) add(claims func(*http.Request) bool, h http.Handler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.others = append(a.others, otherAccount{claims, h})
}

func (a *accounts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.RLock()
	others := a.others
	a.mu.RUnlock()
	for _, o := range others {
		if o.claims(r) {
			o.handler.ServeHTTP(w, r)
			return
		}
	}
	a.own.ServeHTTP(w, r)
}

// Handle registers h for op (a ServeMux pattern with a method, e.g. "GET
// /v2/things/{id}") behind the Kit: counting, latency, faults, Options.Auth
// (unless NoAuth), body buffering, the writes counter (unless NoWrite) and
// the request log.
func (b *Base) Handle(op string, h HandlerFunc, flags ...Flag) { b.kit.Handle(b.mux, op, h, flags...) }

// HandleFunc registers h for pattern as it is, outside the Kit: for the
// simulator's own /_sim endpoints and for rewrites to other endpoints.
func (b *Base) HandleFunc(pattern string, h http.HandlerFunc) { b.mux.HandleFunc(pattern, h) }

// NotFound makes h answer every request no endpoint matches (a 404 in the
// cloud's error format), outside the Kit: the request is neither counted
// nor logged, and no fault applies.
func (b *Base) NotFound(h HandlerFunc) {
	b.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { Write(w, r, h(r)) })
}

// Kit is the request machinery the endpoints run behind, for endpoints
// served on another ServeMux (Kit.Handle) and for its other controls.
func (b *Base) Kit() *Kit { return b.kit }

// Start serves the API on a loopback port.
func (b *Base) Start() { b.ln.Start() }

// Close stops serving and waits for in-flight requests.
func (b *Base) Close() { b.ln.Close() }

// URL is the API's base URL, e.g. "http://127.0.0.1:41234" (no trailing
// slash); "" before Start.
func (b *Base) URL() string { return b.ln.URL() }

// Handler serves the API and /_sim/*, for mounting at the root of another
// server.
func (b *Base) Handler() http.Handler { return b.mux }

// Stats returns the number of requests received per operation, e.g.
// {"GET /v2/things": 3}, faulted and unauthorized ones included.
func (b *Base) Stats() map[string]int { return b.kit.Stats() }

// Writes returns the number of non-GET requests that reached an endpoint:
// authorized and not failed by an injected fault (only the 2xx ones,
// unless the simulator counts every answer: Options.WritesAnyStatus).
func (b *Base) Writes() int { return b.kit.Writes() }

// InjectedLatency returns the total delay the server has added to requests
// so far, from SetLatency and from faults with a Delay. A request whose
// client went away mid-delay does not count.
func (b *Base) InjectedLatency() time.Duration { return b.kit.InjectedLatency() }

// Requests returns the request log, oldest first. It holds at least the
// last Options.MaxRequestLog requests; older ones are dropped.
func (b *Base) Requests() []Request { return b.kit.Requests() }

// ResetConnections makes requests to ops (every endpoint when none) end
// with a closed connection and no answer.
func (b *Base) ResetConnections(ops ...string) (remove func()) {
	return b.kit.ResetConnections(ops...)
}

// SetLatency delays every API request (never /_sim) by d from now on; 0
// turns it off. InjectedLatency and /_sim/stats report the delay served.
func (b *Base) SetLatency(d time.Duration) { b.kit.SetLatency(d) }

// ClearFaults removes every injected fault and the latency.
func (b *Base) ClearFaults() { b.kit.ClearFaults() }

// Inject adds a fault (see Fault); remove takes it out again and is safe
// to call twice.
func (b *Base) Inject(f Fault) (remove func()) { return b.kit.Inject(f) }

// Fail makes requests to ops (every endpoint when none) fail with status
// and the cloud's error body.
func (b *Base) Fail(status int, ops ...string) (remove func()) { return b.kit.Fail(status, ops...) }

// RateLimit makes requests to ops (every endpoint when none) fail with 429
// Too Many Requests and a Retry-After header.
func (b *Base) RateLimit(retryAfter time.Duration, ops ...string) (remove func()) {
	return b.kit.RateLimit(retryAfter, ops...)
}

// Operations returns every endpoint, as Fault.Op and Stats write them, in
// the order they were registered.
func (b *Base) Operations() []string { return b.kit.Ops() }

// Bearer is the bearer token a simulated API accepts, for a simulator's
// Server to embed: tests rotate it with SetToken, and the simulator's
// Options.Auth checks requests with HasBearer(r, Token()). The zero Bearer
// accepts no token until SetToken.
type Bearer struct {
	mu    sync.Mutex
	token string
}

// Token returns the bearer token the API accepts.
func (b *Bearer) Token() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.token
}

// SetToken rotates the accepted token; the old one is rejected from now on.
func (b *Bearer) SetToken(token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.token = token
}

// Authenticate returns an Options.Auth that lets through requests with
// "Authorization: Bearer <Token()>" and answers the others with deny.
func (b *Bearer) Authenticate(deny Response) func(*http.Request) *Response {
	return func(r *http.Request) *Response {
		if HasBearer(r, b.Token()) {
			return nil
		}
		resp := deny
		return &resp
	}
}
