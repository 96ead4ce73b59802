package dosim

import (
	"crypto/subtle"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Defaults for Options.
const (
	DefaultToken             = "do-test-token"
	DefaultRegion            = "nyc3"
	DefaultPerPage           = 20
	MaxPerPage               = 200
	DefaultProvisioningReads = 2
	// RateLimit is the hourly request allowance reported in the
	// RateLimit-Limit header.
	RateLimit     = 5000
	MaxRequestLog = 10_000
	maxBodyBytes  = 1 << 20
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Token is the bearer token the API accepts; "" means DefaultToken.
	Token string
	// Region is the region of droplets added without one and what Env
	// reports as REGION; "" means DefaultRegion.
	Region string
	// PerPage is the page size when a list request has no per_page; 0
	// means DefaultPerPage.
	PerPage int
	// ProvisioningReads is how many reads (GET of it, or a list page
	// holding it) of a "new" load balancer it takes to become "active"
	// (the N-th read returns it active); 0 means DefaultProvisioningReads
	// and a negative value creates load balancers active.
	ProvisioningReads int
	// Faults are injected from the start.
	Faults []Fault
	// Latency delays every API request from the start; SetLatency changes
	// it later.
	Latency time.Duration
	// Seed seeds the random source of Faults with a Rate.
	Seed uint64
	// Logger receives one line per request at V(4); the zero Logger
	// discards.
	Logger logr.Logger
}

// Server is a simulated DigitalOcean API v2. It is safe for concurrent use.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu        sync.Mutex
	token     string
	st        *state
	faults    []*activeFault
	latency   time.Duration
	injected  time.Duration
	rng       *rand.Rand
	requests  []Request
	stats     map[string]int
	writes    int
	served    int // requests answered, for RateLimit-Remaining and request IDs
	rateReset time.Time

	ts  *httptest.Server
	ops []string // the API endpoints, as Fault.Op writes them
}

// Request is one entry of the request log.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Op is the endpoint, e.g. "GET /v2/droplets/{id}".
	Op     string `json:"op"`
	Status int    `json:"status"`
}

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.PerPage <= 0 {
		opts.PerPage = DefaultPerPage
	}
	opts.PerPage = min(opts.PerPage, MaxPerPage)
	if opts.ProvisioningReads == 0 {
		opts.ProvisioningReads = DefaultProvisioningReads
	}
	s := &Server{
		opts:      opts,
		mux:       http.NewServeMux(),
		token:     opts.Token,
		latency:   opts.Latency,
		st:        newState(),
		rng:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
		stats:     map[string]int{},
		rateReset: time.Now().Add(time.Hour).Truncate(time.Second),
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
func (s *Server) Start() { s.ts = httptest.NewServer(s.mux) }

// Close stops serving and waits for in-flight requests.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// URL is the API's base URL, e.g. "http://127.0.0.1:41234" (no trailing
// slash; godo wants one: godo.SetBaseURL(s.URL()+"/")).
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Handler serves the API, for mounting at the root of another server.
func (s *Server) Handler() http.Handler { return s.mux }

// Env returns the environment variables that point the DigitalOcean
// provider at this cloud when it is served at baseURL.
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"DO_ACCESS_TOKEN": s.Token(),
		"DO_OVERRIDE_URL": baseURL,
		"REGION":          s.opts.Region,
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

// Stats returns the number of requests received per operation, e.g.
// {"GET /v2/droplets": 3}, faulted and unauthorized ones included.
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

// InjectedLatency returns the total delay the server has added so far.
func (s *Server) InjectedLatency() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.injected
}

// Requests returns the request log, oldest first (at least the last
// MaxRequestLog requests).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// handlerFunc serves one endpoint with the state locked. It returns the
// status and the value to encode as JSON (nil for no body).
type handlerFunc func(r *http.Request) (status int, body any)

func (s *Server) routes() {
	s.handle("GET /v2/account", s.getAccount)
	s.handle("GET /v2/regions", s.listRegions)
	s.handle("GET /v2/droplets", s.listDroplets)
	s.handle("GET /v2/droplets/{id}", s.getDroplet)
	s.handle("GET /v2/load_balancers", s.listLoadBalancers)
	s.handle("POST /v2/load_balancers", s.createLoadBalancer)
	s.handle("GET /v2/load_balancers/{id}", s.getLoadBalancer)
	s.handle("PUT /v2/load_balancers/{id}", s.updateLoadBalancer)
	s.handle("DELETE /v2/load_balancers/{id}", s.deleteLoadBalancer)
	s.handle("POST /v2/load_balancers/{id}/droplets", s.addLBDroplets)
	s.handle("DELETE /v2/load_balancers/{id}/droplets", s.removeLBDroplets)
	s.handle("POST /v2/load_balancers/{id}/forwarding_rules", s.addLBRules)
	s.handle("DELETE /v2/load_balancers/{id}/forwarding_rules", s.removeLBRules)
	s.handle("GET /v2/certificates", s.listCertificates)
	s.handle("GET /v2/certificates/{id}", s.getCertificate)
	s.handle("GET /v2/tags", s.listTags)
	s.handle("POST /v2/tags", s.createTag)
	s.handle("GET /v2/tags/{name}", s.getTag)
	s.handle("DELETE /v2/tags/{name}", s.deleteTag)
	s.handle("POST /v2/tags/{name}/resources", s.tagResources)
	s.handle("DELETE /v2/tags/{name}/resources", s.untagResources)
	s.handle("GET /v2/firewalls", s.listFirewalls)
	s.handle("POST /v2/firewalls", s.createFirewall)
	s.handle("GET /v2/firewalls/{id}", s.getFirewall)
	s.handle("PUT /v2/firewalls/{id}", s.updateFirewall)
	s.handle("DELETE /v2/firewalls/{id}", s.deleteFirewall)
	s.mux.HandleFunc("GET /_sim/stats", s.serveStats)
	s.mux.HandleFunc("GET /_sim/state", s.serveState)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		reqID := s.rateHeaders(w)
		writeJSON(w, http.StatusNotFound, apiError{ID: "not_found", Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path), RequestID: reqID})
	})
}

// handle registers an API endpoint behind fault injection, authentication,
// rate-limit headers and the request log.
func (s *Server) handle(op string, h handlerFunc) {
	s.ops = append(s.ops, op)
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
	var reqID string
	if !faulted || !f.Reset {
		reqID = s.rateHeaders(w)
	}
	if faulted {
		if status, done := f.apply(w, reqID); done {
			return status
		}
	}
	if !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, apiError{ID: "unauthorized", Message: msgUnauthorized, RequestID: reqID})
		return http.StatusUnauthorized
	}
	if err := bufferBody(r); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{ID: "bad_request", Message: err.Error(), RequestID: reqID})
		return http.StatusBadRequest
	}
	s.mu.Lock()
	if r.Method != http.MethodGet {
		s.writes++
	}
	status, body := h(r)
	if e, ok := body.(apiError); ok {
		e.RequestID = reqID
		body = e
	}
	s.mu.Unlock()
	writeJSON(w, status, body)
	return status
}

// rateHeaders sets the rate-limit headers and X-Request-Id, and returns the
// request ID; every request uses up one of RateLimit.
func (s *Server) rateHeaders(w http.ResponseWriter) (requestID string) {
	s.mu.Lock()
	s.served++
	n := s.served
	s.mu.Unlock()
	requestID = fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(RateLimit))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(RateLimit-n, 0)))
	h.Set("RateLimit-Reset", strconv.FormatInt(s.rateReset.Unix(), 10))
	h.Set("X-Request-Id", requestID)
	return requestID
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

func (s *Server) getAccount(*http.Request) (int, any) {
	return http.StatusOK, map[string]any{"account": map[string]any{
		"droplet_limit": 25000, "floating_ip_limit": 100, "reserved_ip_limit": 100, "volume_limit": 100,
		"email": "sammy@example.com", "name": "Sammy", "uuid": "b6fr89dbf6d9156cace5f3c78dc9851d957381ef",
		"email_verified": true, "status": "active", "status_message": "",
	}}
}
