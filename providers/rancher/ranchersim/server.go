package ranchersim

import (
	"cmp"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	// DefaultProject is the environment (project) the API keys belong to:
	// the API is served under /v2-beta/projects/<project>.
	DefaultProject = "1a5"
	// DefaultAccessKey and DefaultSecretKey are the environment API key
	// every request authenticates with (HTTP Basic).
	DefaultAccessKey = "5C1D0A4F1B6E7C9D2E3F"
	DefaultSecretKey = "ranchersim-secret-key-Hm7qR2vX9pL4tW8zK3nB" //nolint:gosec // the simulator's test credential
	// DefaultLBImage is the lb.instance.image setting: the HAProxy image
	// Cattle runs load balancer services with.
	DefaultLBImage = "rancher/lb-service-haproxy:v0.9.14"
	// DefaultProvisioningReads: see Options.ProvisioningReads.
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	// APIVersion is the API version path every URL starts with.
	APIVersion = "/v2-beta"
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start, the latency of every
	// API request, the seed of faults with a Rate and the request logger.
	simkit.Common
	// Project is the environment's ID; "" means DefaultProject.
	Project string
	// AccessKey and SecretKey are the environment API key the API
	// accepts; "" means DefaultAccessKey and DefaultSecretKey. AddAPIKey
	// adds more.
	AccessKey, SecretKey string
	// LBImage is the lb.instance.image setting; "" means DefaultLBImage.
	LBImage string
	// ProvisioningReads is how many reads (a GET of it, or a list page
	// holding it) a resource in a transitioning state (registering,
	// activating, updating-active, upgrading, removing...) takes to reach
	// the next state; 0 means DefaultProvisioningReads, a negative value
	// settles at once.
	ProvisioningReads int
	// Now is the server's clock (created and removed timestamps); nil
	// means time.Now.
	Now func() time.Time
}

// Server is a simulated Cattle API v2-beta (Rancher 1.x). It is safe for
// concurrent use.
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency, Inject,
	// Fail, RateLimit, ClearFaults and Operations, and serves /_sim/stats
	// and /_sim/state.
	simkit.Base

	opts Options
	keys simkit.BasicAuth

	mu sync.Mutex
	st *state

	// otherOnce creates other, the other environment (OtherEnvironment).
	otherOnce sync.Once
	other     *Server

	// routed are the endpoints registered (handle), for the answers to
	// the methods a type's schema does not allow (typeRoutes).
	routed map[string]bool
}

// Request is one entry of the request log.
type Request = simkit.Request

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener.
func New(opts Options) *Server {
	opts = withDefaults(opts)
	s := &Server{opts: opts, routed: map[string]bool{}}
	s.keys.Set(opts.AccessKey, opts.SecretKey)
	s.st = newState(opts, &s.mu)
	s.Base = simkit.NewBase(simkit.Options{
		Common:    opts.Common,
		ErrorBody: apiErrors.ErrorBody,
		Auth:      s.authenticate,
		Respond:   s.respond,
		Lock:      &s.mu,
	}, s.State)
	s.routes()
	return s
}

func withDefaults(o Options) Options {
	o.Project = cmp.Or(o.Project, DefaultProject)
	o.AccessKey = cmp.Or(o.AccessKey, DefaultAccessKey)
	o.SecretKey = cmp.Or(o.SecretKey, DefaultSecretKey)
	o.LBImage = cmp.Or(o.LBImage, DefaultLBImage)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// TB is the part of testing.TB that NewServer needs.
type TB = simkit.TB

// NewServer starts a Server on a loopback port and closes it when the test
// ends.
func NewServer(t TB, opts Options) *Server {
	t.Helper()
	return simkit.StartForTest(t, New(opts))
}

// Project is the environment's ID.
func (s *Server) Project() string { return s.opts.Project }

// ProjectURL is the environment's API URL for the cloud served at
// baseURL: what CATTLE_URL holds.
func (s *Server) ProjectURL(baseURL string) string {
	return strings.TrimSuffix(baseURL, "/") + APIVersion + "/projects/" + s.opts.Project
}

// Env returns the environment variables that point the Rancher provider
// (and the existing rancher-cloud-controller-manager) at this cloud served
// at baseURL, with the environment API key of Options.
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"CATTLE_URL":        s.ProjectURL(baseURL),
		"CATTLE_ACCESS_KEY": s.opts.AccessKey,
		"CATTLE_SECRET_KEY": s.opts.SecretKey,
	}
}

// AddAPIKey makes the API accept another environment API key (or
// rotates the secret of a known access key).
func (s *Server) AddAPIKey(accessKey, secretKey string) { s.keys.Set(accessKey, secretKey) }

// RevokeAPIKey makes the API refuse an access key from now on.
func (s *Server) RevokeAPIKey(accessKey string) { s.keys.Delete(accessKey) }

// authRealm is the realm of the 401 challenge.
const authRealm = "Enter API access key and secret"

// authenticate lets through requests with a known API key (HTTP Basic);
// others get 401 with Cattle's error body.
func (s *Server) authenticate(r *http.Request) *simkit.Response {
	if _, ok := s.keys.Check(r); ok {
		return nil
	}
	resp := simkit.JSON(http.StatusUnauthorized, apiError{
		ID: "401-Unauthorized", Type: "error", BaseType: "error", Links: map[string]string{}, Actions: map[string]string{},
		Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: ptr("Unauthorized"),
	})
	resp.Header = http.Header{"Www-Authenticate": {simkit.BasicChallenge(authRealm)}}
	return &resp
}

func ptr[T any](v T) *T { return &v }

// projectPath is the path prefix of the environment's API, as the routes
// write it.
const projectPath = APIVersion + "/projects/{project}"

// handle registers an API endpoint behind the Kit; an endpoint under
// projectPath answers 404 for any project but the environment's.
func (s *Server) handle(op string, h simkit.HandlerFunc) {
	s.routed[op] = true
	if strings.Contains(op, "{project}") {
		inner := h
		h = func(r *http.Request) simkit.Response {
			if r.PathValue("project") != s.opts.Project {
				return notFound()
			}
			return inner(r)
		}
	}
	s.Handle(op, h)
}

func (s *Server) routes() {
	s.handle("GET "+APIVersion, s.getRoot)
	s.handle("GET "+APIVersion+"/schemas", s.listSchemas)
	s.handle("GET "+APIVersion+"/schemas/{id}", s.getSchema)
	s.handle("GET "+APIVersion+"/projects", s.listProjects)
	s.handle("GET "+projectPath, s.getProject)
	s.handle("GET "+projectPath+"/schemas", s.listSchemas)
	s.handle("GET "+projectPath+"/schemas/{id}", s.getSchema)
	s.hostRoutes()
	s.handle("GET "+projectPath+"/settings", s.listSettings)
	s.handle("GET "+projectPath+"/settings/{id}", s.getSetting)
	s.stackRoutes()
	s.serviceRoutes()
	s.certificateRoutes()
	s.volumeRoutes()
	s.storageRoutes()
	s.mountRoutes()
	s.emptyRoutes()
	s.catalogRoutes()
	s.typeRoutes()
	s.NotFound(func(r *http.Request) simkit.Response {
		if r.URL.Path == catalogPath || strings.HasPrefix(r.URL.Path, catalogPath+"/") {
			return catalogNoRoute()
		}
		return s.respond(r, "", notFound())
	})
}
