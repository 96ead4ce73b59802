package skeletonsim

import (
	"cmp"
	"net/http"
	"sync"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	DefaultToken             = "skeleton-test-token"
	DefaultPerPage           = 50
	MaxPerPage               = 200
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	MaxRequestLog            = simkit.DefaultMaxRequestLog
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start (e.g. a scenario's
	// failure rates), the latency of every API request, the seed of
	// faults with a Rate (so a scenario fails the same requests on every
	// run) and the request logger.
	simkit.Common
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
}

// Server is a simulated Skeleton Cloud. It is safe for concurrent use.
//
// The cloud-independent machinery (faults, latency, the request log and
// stats, the listener) is simkit's; Server keeps what is Skeleton
// Cloud's: routes, resources, JSON shapes, error bodies and bearer auth.
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency and
	// ClearFaults, serves /_sim/stats and /_sim/state, and registers the
	// endpoints (Handle, NotFound).
	simkit.Base
	// Bearer brings Token and SetToken.
	simkit.Bearer

	opts Options

	mu sync.Mutex
	st *state

	otherOnce sync.Once
	other     *Server // another account, served on this URL (OtherAccount)
}

// Request is one entry of the request log.
type Request = simkit.Request

// New returns a Server that is not listening yet: call Start, or mount
// Handler.
func New(opts Options) *Server {
	opts.Token = cmp.Or(opts.Token, DefaultToken)
	if opts.PerPage <= 0 {
		opts.PerPage = DefaultPerPage
	}
	opts.PerPage = min(opts.PerPage, MaxPerPage)
	s := &Server{opts: opts, st: newState(opts.ProvisioningReads)}
	// In cmd/cloudsim, what is pending also settles with time.
	s.st.provisioning.WithTime(opts.SettleAfter, &s.mu)
	s.SetToken(opts.Token)
	s.Base = simkit.NewBase(simkit.Options{
		Common:          opts.Common,
		ErrorBody:       apiErrors.ErrorBody,
		RetryAfterOn:    func(int) bool { return false }, // only a fault's own RetryAfter
		Auth:            s.Authenticate(apiErrors.Error(http.StatusUnauthorized, "missing or invalid bearer token")),
		Lock:            &s.mu,
		WritesAnyStatus: true,
	}, s.State)
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

// Env returns the environment variables that point the skeleton provider
// at this cloud when it is served at baseURL (URL() once started).
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"SKELETON_API_URL": baseURL,
		"SKELETON_TOKEN":   s.Token(),
	}
}

// State returns a copy of everything the cloud holds.
func (s *Server) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.snapshot()
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
	// Not "not_found": that code means a resource is gone, and a client
	// must be able to tell that from a wrong URL.
	s.NotFound(func(r *http.Request) simkit.Response {
		return apiErrors.ErrorCode(http.StatusNotFound, "unknown_endpoint", "no endpoint %s %s", r.Method, r.URL.Path)
	})
}

// handle registers an API endpoint behind the Kit: fault injection,
// authentication and the request log. The Kit reads the body before
// taking the lock, so a slow client cannot stall the cloud.
func (s *Server) handle(op string, h handlerFunc) { s.Handle(op, simkit.Answer(h)) }
