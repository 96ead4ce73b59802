package simkit

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Defaults for Options.
const (
	DefaultMaxRequestLog = 10_000
	DefaultMaxBodyBytes  = 1 << 20
)

// Common are the settings every simulator takes alike: a simulator's
// Options embeds them and hands them to its Kit (Options.Common), and
// tools that start any simulated cloud (internal/cluster) set them.
type Common struct {
	// Faults are injected from the start.
	Faults []Fault
	// Latency delays every API request (never /_sim) from the start;
	// SetLatency changes it later.
	Latency time.Duration
	// Seed seeds the random source of Faults with a Rate, so a run fails
	// the same requests every time.
	Seed uint64
	// Logger receives one line per request at V(4); the zero Logger
	// discards.
	Logger logr.Logger
	// SettleAfter settles a pending resource (a Lifecycle's) that long
	// after it started even when nobody reads it, as the real cloud moves
	// on with time; 0 settles only on reads and Advance, so tests need no
	// sleep. cmd/cloudsim turns it on.
	SettleAfter time.Duration
}

// ErrorInfo is what an error body says: for the answers the Kit makes
// itself (an injected fault, an oversized body), the simulator's
// Options.ErrorBody puts it in its cloud's error format.
type ErrorInfo struct {
	// Op is the endpoint the request went to, e.g. "GET /v2/things/{id}".
	Op     string
	Status int
	// Code is the cloud's error code or type (DigitalOcean's "id",
	// Skeleton Cloud's "code", Neutron's "type"), from Fault.Code; ""
	// means the one for Status.
	Code string
	// Message is the human-readable message; "" (a fault that sets
	// none) means the cloud's usual one for Status.
	Message string
}

// Options configures a Kit. The zero value is usable.
type Options struct {
	// Common are the simulator's faults, latency, seed and logger.
	Common
	// ErrorBody builds the JSON body of the errors the Kit answers itself
	// (injected faults, oversized bodies) for a request, in the cloud's
	// error format; nil means {"message": e.Message} (DefaultMessage when
	// it is empty).
	ErrorBody func(r *http.Request, e ErrorInfo) any
	// RetryAfterOn reports whether an injected fault with status carries
	// a Retry-After header ("0") even when its RetryAfter is 0, as the
	// cloud's rate limiter or maintenance answers do; nil means 429 and
	// 503. A fault with a positive RetryAfter always carries one.
	RetryAfterOn func(status int) bool
	// Auth, when set, vets every request to an endpoint not registered with
	// NoAuth: it returns nil to let the request through, or the answer.
	Auth func(r *http.Request) *Response
	// Respond, when set, sees every answer to a request for an endpoint
	// (the endpoint's, an injected fault's, Auth's, the body limit's) just
	// before it is sent, and returns it, changed or not: e.g. to add the
	// headers every answer of the cloud carries (a Content-Type set there
	// wins) or a request ID to error bodies. A closed connection, or a
	// client gone away, gets no answer and no call.
	Respond func(r *http.Request, op string, resp Response) Response
	// Lock, when set, is held while an endpoint's handler runs: the
	// simulator's state mutex. Auth and Respond run without it.
	Lock sync.Locker
	// WritesAnyStatus counts as a write every request a non-read endpoint
	// serves, whatever it answers; by default only 2xx answers count.
	WritesAnyStatus bool
	// MaxRequestLog bounds the request log; 0 means DefaultMaxRequestLog.
	MaxRequestLog int
	// MaxBodyBytes bounds request bodies (larger ones get 413); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Kit is the per-simulator request machinery. It is safe for concurrent
// use.
type Kit struct {
	opts Options

	mu       sync.Mutex
	faults   []*activeFault
	latency  time.Duration
	injected time.Duration
	rng      *rand.Rand
	requests []Request
	stats    map[string]int
	writes   int
	served   int
	ops      []string
}

// Request is one entry of the request log.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Op is the endpoint, e.g. "GET /v2/things/{id}".
	Op string `json:"op"`
	// Status is what the client got; 0 when the connection was closed
	// without an answer or the client went away.
	Status int `json:"status"`
}

// Response is an endpoint's answer.
type Response struct {
	Status int
	// Body is encoded as JSON with Content-Type application/json; nil
	// means no body.
	Body any
	// Header holds extra response headers.
	Header http.Header
}

// HandlerFunc serves one endpoint.
type HandlerFunc func(r *http.Request) Response

// Flag changes how Handle treats an endpoint.
type Flag uint8

const (
	// NoAuth skips Options.Auth (version documents, token endpoints).
	NoAuth Flag = 1 << iota
	// NoWrite never counts the endpoint as a write (e.g. a login POST).
	NoWrite
)

// New returns a Kit.
func New(opts Options) *Kit {
	if opts.MaxRequestLog <= 0 {
		opts.MaxRequestLog = DefaultMaxRequestLog
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ErrorBody == nil {
		opts.ErrorBody = func(_ *http.Request, e ErrorInfo) any {
			return map[string]string{"message": cmp.Or(e.Message, DefaultMessage(e.Status))}
		}
	}
	if opts.RetryAfterOn == nil {
		opts.RetryAfterOn = func(status int) bool {
			return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
		}
	}
	k := &Kit{
		opts:    opts,
		latency: opts.Latency,
		rng:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
		stats:   map[string]int{},
	}
	for _, f := range opts.Faults {
		k.Inject(f)
	}
	return k
}

// Ops returns the registered operations, in registration order.
func (k *Kit) Ops() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.ops)
}

// Stats returns the number of requests received per operation, faulted
// and unauthorized ones included.
func (k *Kit) Stats() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps.Clone(k.stats)
}

// Writes returns the number of successful (2xx) requests to endpoints
// other than GET and HEAD ones, NoWrite ones excluded.
func (k *Kit) Writes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writes
}

// Served returns the number of requests received so far.
func (k *Kit) Served() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.served
}

// InjectedLatency returns the total delay added so far.
func (k *Kit) InjectedLatency() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.injected
}

// Requests returns the request log, oldest first (at least the last
// Options.MaxRequestLog requests).
func (k *Kit) Requests() []Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.requests)
}

// ResetStats clears the per-operation counts, the writes counter and the
// request log.
func (k *Kit) ResetStats() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stats, k.writes, k.requests, k.injected = map[string]int{}, 0, nil, 0
}

// ServeStats answers GET /_sim/stats: requests, writes, per-operation
// counts and latency.
func (k *Kit) ServeStats(w http.ResponseWriter, _ *http.Request) {
	k.mu.Lock()
	total := 0
	for _, n := range k.stats {
		total += n
	}
	body := map[string]any{
		"requests":            total,
		"writes":              k.writes,
		"operations":          maps.Clone(k.stats),
		"faults":              len(k.faults),
		"latency_ms":          milliseconds(k.latency),
		"injected_latency_ms": milliseconds(k.injected),
	}
	k.mu.Unlock()
	WriteJSON(w, http.StatusOK, body)
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

func (k *Kit) log(r *http.Request, op string, status int) {
	k.opts.Logger.V(4).Info("Request", "method", r.Method, "path", r.URL.Path, "op", op, "status", status)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.requests) >= 2*k.opts.MaxRequestLog {
		k.requests = append(k.requests[:0], k.requests[len(k.requests)-k.opts.MaxRequestLog:]...)
	}
	k.requests = append(k.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Op: op, Status: status})
}
