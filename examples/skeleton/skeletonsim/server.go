package skeletonsim

import (
	"crypto/subtle"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Defaults for Options.
const (
	DefaultToken             = "skeleton-test-token"
	DefaultPerPage           = 50
	MaxPerPage               = 200
	DefaultProvisioningReads = 2
	MaxRequestLog            = 10_000
	maxBodyBytes             = 1 << 20
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Token is the bearer token the API accepts; "" means DefaultToken.
	Token string
	// PerPage is the page size when a list request has no per_page;
	// 0 means DefaultPerPage.
	PerPage int
	// ProvisioningReads is how many reads (GETs or list pages) of a
	// provisioning load balancer it takes to become active (the N-th
	// returns it active); 0 means
	// DefaultProvisioningReads and a negative value creates load balancers
	// active.
	ProvisioningReads int
	// Faults are injected from the start, e.g. a scenario's failure rates.
	Faults []Fault
	// Latency delays every API request from the start; SetLatency changes
	// it later.
	Latency time.Duration
	// Seed seeds the random source of Faults with a Rate, so a scenario
	// fails the same requests on every run.
	Seed uint64
	// Logger receives one line per request at V(4); the zero Logger
	// discards.
	Logger logr.Logger
}

// Server is a simulated Skeleton Cloud. It is safe for concurrent use.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex
	token    string
	st       *state
	faults   []*activeFault
	latency  time.Duration
	injected time.Duration // total delay served, latency and faults
	rng      *rand.Rand
	requests []Request
	stats    map[string]int
	writes   int

	ts *httptest.Server
}

// Request is one entry of the request log.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Op is the endpoint, e.g. "GET /v1/load-balancers/{id}".
	Op     string `json:"op"`
	Status int    `json:"status"`
}

// New returns a Server that is not listening yet: call Start, or mount
// Handler.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	if opts.PerPage <= 0 {
		opts.PerPage = DefaultPerPage
	}
	opts.PerPage = min(opts.PerPage, MaxPerPage)
	if opts.ProvisioningReads == 0 {
		opts.ProvisioningReads = DefaultProvisioningReads
	}
	s := &Server{
		opts:    opts,
		mux:     http.NewServeMux(),
		token:   opts.Token,
		latency: opts.Latency,
		st:      newState(),
		rng:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
		stats:   map[string]int{},
	}
	for _, f := range opts.Faults {
		s.Inject(f)
	}
	s.routes()
	return s
}

// TB is the part of testing.TB that NewServer needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// NewServer starts a Server on a loopback port and closes it when the test
// ends.
func NewServer(t TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Start serves the API on a loopback port.
func (s *Server) Start() {
	s.ts = httptest.NewServer(s.mux)
}

// Close stops serving and waits for in-flight requests.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// URL is the API's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Handler serves the API, for mounting in another server.
func (s *Server) Handler() http.Handler { return s.mux }

// Env returns the environment variables that point the skeleton provider
// at this cloud when it is served at baseURL (URL() once started).
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"SKELETON_API_URL": baseURL,
		"SKELETON_TOKEN":   s.Token(),
	}
}

// Token returns the bearer token the API accepts.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// SetToken rotates the accepted token; the old one is rejected from now on.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.snapshot()
}

// Stats returns the number of requests received per operation, e.g.
// {"GET /v1/instances": 3}, faulted and unauthorized ones included.
func (s *Server) Stats() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.stats)
}

// Writes returns the number of non-GET requests that reached an endpoint:
// authorized and not failed by an injected fault.
func (s *Server) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// InjectedLatency returns the total delay the server has added to requests
// so far, from SetLatency and from faults with a Delay. A request whose
// client went away mid-delay does not count.
func (s *Server) InjectedLatency() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.injected
}

// Requests returns the request log, oldest first. It holds at least the
// last MaxRequestLog requests; older ones are dropped.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// handlerFunc serves one endpoint with the state locked. It returns the
// status and the value to encode as JSON (nil for no body).
type handlerFunc func(r *http.Request) (status int, body any)

func (s *Server) routes() {
	s.handle("GET /v1/instances", s.listInstances)
	s.handle("GET /v1/instances/{id}", s.getInstance)
	s.handle("GET /v1/load-balancers", s.listLoadBalancers)
	s.handle("POST /v1/load-balancers", s.createLoadBalancer)
	s.handle("GET /v1/load-balancers/{id}", s.getLoadBalancer)
	s.handle("PUT /v1/load-balancers/{id}", s.updateLoadBalancer)
	s.handle("DELETE /v1/load-balancers/{id}", s.deleteLoadBalancer)
	s.handle("GET /v1/routes", s.listRoutes)
	s.handle("POST /v1/routes", s.createRoute)
	s.handle("DELETE /v1/routes/{id}", s.deleteRoute)
	s.mux.HandleFunc("GET /_sim/stats", s.serveStats)
	s.mux.HandleFunc("GET /_sim/state", s.serveState)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Not "not_found": that code means a resource is gone, and a
		// client must be able to tell that from a wrong URL.
		body := errorBody(http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
		body.Error.Code = "unknown_endpoint"
		writeJSON(w, http.StatusNotFound, body)
	})
}

// handle registers an API endpoint behind fault injection, authentication
// and the request log.
func (s *Server) handle(op string, h handlerFunc) {
	s.mux.HandleFunc(op, func(w http.ResponseWriter, r *http.Request) {
		status := s.serve(w, r, op, h)
		s.opts.Logger.V(4).Info("Request", "method", r.Method, "path", r.URL.Path, "status", status)
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.requests) >= 2*MaxRequestLog {
			s.requests = append(s.requests[:0], s.requests[len(s.requests)-MaxRequestLog:]...)
		}
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Op: op, Status: status})
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, op string, h handlerFunc) int {
	s.mu.Lock()
	s.stats[op]++
	f, faulted := s.pickFault(op)
	delay := s.latency
	if faulted {
		delay += f.Delay
	}
	s.mu.Unlock()

	if !sleep(r, delay) {
		return 0 // the client went away
	}
	if delay > 0 {
		s.mu.Lock()
		s.injected += delay
		s.mu.Unlock()
	}
	if faulted {
		if status, done := f.apply(w, r); done {
			return status
		}
	}
	if !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, errorBody(http.StatusUnauthorized, "missing or invalid bearer token"))
		return http.StatusUnauthorized
	}

	// Read the body before taking the lock, so a slow client cannot stall
	// the cloud.
	if err := bufferBody(r); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(http.StatusBadRequest, err.Error()))
		return http.StatusBadRequest
	}
	s.mu.Lock()
	if r.Method != http.MethodGet {
		s.writes++
	}
	status, body := h(r)
	s.mu.Unlock()
	writeJSON(w, status, body)
	return status
}

func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	want := s.Token()
	return ok && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (s *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, n := range s.stats {
		total += n
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"requests":            total,
		"writes":              s.writes,
		"operations":          s.stats,
		"latency_ms":          milliseconds(s.latency),
		"injected_latency_ms": milliseconds(s.injected),
	})
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

func (s *Server) serveState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.State())
}
