package skeletonsim

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	DefaultToken             = "skeleton-test-token"
	DefaultPerPage           = 50
	MaxPerPage               = 200
	DefaultProvisioningReads = 2
	MaxRequestLog            = simkit.DefaultMaxRequestLog
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
//
// The cloud-independent machinery (faults, latency, the request log and
// stats, the listener) is simkit's; Server keeps what is Skeleton
// Cloud's: routes, resources, JSON shapes, error bodies and bearer auth.
type Server struct {
	ln   simkit.Listener
	opts Options
	mux  *http.ServeMux
	kit  *simkit.Kit

	mu    sync.Mutex
	token string
	st    *state
}

// Request is one entry of the request log.
type Request = simkit.Request

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
		opts:  opts,
		mux:   http.NewServeMux(),
		token: opts.Token,
		st:    newState(),
	}
	s.ln = simkit.NewListener(s.mux)
	faults := make([]simkit.Fault, 0, len(opts.Faults))
	for _, f := range opts.Faults {
		faults = append(faults, f.kit())
	}
	s.kit = simkit.New(simkit.Options{
		ErrorBody: func(_ *http.Request, _ string, status int, msg string) any {
			return errorBody(status, msg)
		},
		Auth:            s.authenticate,
		Lock:            &s.mu,
		WritesAnyStatus: true,
		Faults:          faults,
		Latency:         opts.Latency,
		Seed:            opts.Seed,
		Logger:          opts.Logger,
	})
	s.routes()
	return s
}

// TB is the part of testing.TB that NewServer needs.
type TB = simkit.TB

// NewServer starts a Server on a loopback port and closes it when the test
// ends.
func NewServer(t TB, opts Options) *Server {
	t.Helper()
	return simkit.StartForTest(t, New(opts))
}

// Start serves the API on a loopback port.
func (s *Server) Start() { s.ln.Start() }

// Close stops serving and waits for in-flight requests.
func (s *Server) Close() { s.ln.Close() }

// URL is the API's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.ln.URL() }

// Handler serves the API, for mounting at the root of another server.
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
func (s *Server) Stats() map[string]int { return s.kit.Stats() }

// Writes returns the number of non-GET requests that reached an endpoint:
// authorized and not failed by an injected fault.
func (s *Server) Writes() int { return s.kit.Writes() }

// InjectedLatency returns the total delay the server has added to requests
// so far, from SetLatency and from faults with a Delay. A request whose
// client went away mid-delay does not count.
func (s *Server) InjectedLatency() time.Duration { return s.kit.InjectedLatency() }

// Requests returns the request log, oldest first. It holds at least the
// last MaxRequestLog requests; older ones are dropped.
func (s *Server) Requests() []Request { return s.kit.Requests() }

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
	s.mux.HandleFunc("GET /_sim/stats", s.kit.ServeStats)
	s.mux.HandleFunc("GET /_sim/state", func(w http.ResponseWriter, _ *http.Request) {
		simkit.WriteJSON(w, http.StatusOK, s.State())
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Not "not_found": that code means a resource is gone, and a
		// client must be able to tell that from a wrong URL.
		body := errorBody(http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
		body.Error.Code = "unknown_endpoint"
		simkit.WriteJSON(w, http.StatusNotFound, body)
	})
}

// handle registers an API endpoint behind the Kit: fault injection,
// authentication and the request log. The Kit reads the body before
// taking the lock, so a slow client cannot stall the cloud.
func (s *Server) handle(op string, h handlerFunc) {
	s.kit.Handle(s.mux, op, func(r *http.Request) simkit.Response { return simkit.JSON(h(r)) })
}

// authenticate rejects requests without "Authorization: Bearer <token>".
func (s *Server) authenticate(r *http.Request) *simkit.Response {
	if simkit.HasBearer(r, s.Token()) {
		return nil
	}
	resp := simkit.JSON(http.StatusUnauthorized, errorBody(http.StatusUnauthorized, "missing or invalid bearer token"))
	return &resp
}
