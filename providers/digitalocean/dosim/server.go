package dosim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	DefaultToken             = "do-test-token"
	DefaultRegion            = "nyc3"
	DefaultPerPage           = 20
	MaxPerPage               = 200
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	// RateLimit is the hourly request allowance reported in the
	// RateLimit-Limit header.
	RateLimit     = 5000
	MaxRequestLog = simkit.DefaultMaxRequestLog
	// DefaultVolumesPerDroplet is how many volumes a droplet takes: "up
	// to fifteen volumes may be attached to a Droplet at a time" (openapi
	// specification/resources/volumes/volumeActions_post_byId.yml).
	DefaultVolumesPerDroplet = 15
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start, the latency of every
	// API request, the seed of faults with a Rate and the request logger.
	simkit.Common
	// Token is the bearer token the API accepts; "" means DefaultToken.
	Token string
	// Tokens are more tokens of the same team that the API accepts as
	// well, e.g. a read-only one beside the CCM's (a team has as many
	// personal access tokens as it makes). SetToken does not revoke them.
	Tokens []string
	// Region is the region of droplets added without one and what Env
	// reports as REGION; "" means DefaultRegion.
	Region string
	// PerPage is the page size when a list request has no per_page; 0
	// means DefaultPerPage.
	PerPage int
	// ProvisioningReads is how many reads (GET of it, or a list page
	// holding it) of a "new" load balancer it takes to become "active"
	// (the N-th read returns it active), of a "waiting" firewall to
	// succeed and of an "in-progress" droplet action to complete; 0 means
	// DefaultProvisioningReads and a negative value settles them at once.
	// Common.SettleAfter settles them with time as well. Volume actions
	// (attach, detach, resize) complete the same way.
	ProvisioningReads int
	// VolumesPerDroplet is how many volumes one droplet can have attached
	// (attaching one more is 422 "cannot attach more volumes to the
	// Droplet"); 0 means DefaultVolumesPerDroplet. csi-digitalocean's node
	// plugin reports 7 (its maxVolumesPerNode), DigitalOcean's own limit
	// of old.
	VolumesPerDroplet int
	// Hypervisor, when set, is told what happens to volumes' blocks: a
	// volume created (from a snapshot or empty), attached, detached,
	// resized, snapshotted or deleted, a snapshot deleted (see
	// simkit.Hypervisor and the package doc). nil: volumes are records
	// only.
	Hypervisor simkit.Hypervisor
}

// Server is a simulated DigitalOcean API v2. It is safe for concurrent use.
// Its URL has no trailing slash; godo wants one:
// godo.SetBaseURL(s.URL()+"/").
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency and
	// ClearFaults, and serves /_sim/stats and /_sim/state.
	simkit.Base
	// Bearer brings Token and SetToken.
	simkit.Bearer

	opts Options

	mu        sync.Mutex
	st        *state
	served    int // answers sent, for RateLimit-Remaining and request IDs
	rateReset time.Time

	otherOnce sync.Once
	other     *Server // another team, served on this URL (OtherTeam)
}

// Request is one entry of the request log.
type Request = simkit.Request

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener.
func New(opts Options) *Server {
	opts.Token = cmp.Or(opts.Token, DefaultToken)
	opts.Region = cmp.Or(opts.Region, DefaultRegion)
	if opts.PerPage <= 0 {
		opts.PerPage = DefaultPerPage
	}
	if opts.VolumesPerDroplet <= 0 {
		opts.VolumesPerDroplet = DefaultVolumesPerDroplet
	}
	opts.PerPage = min(opts.PerPage, MaxPerPage)
	opts.Tokens = slices.Clone(opts.Tokens)
	s := &Server{
		opts:      opts,
		rateReset: time.Now().Add(time.Hour).Truncate(time.Second),
	}
	s.st = newState(opts.ProvisioningReads, opts.SettleAfter, &s.mu)
	s.SetToken(opts.Token)
	s.Base = simkit.NewBase(simkit.Options{
		Common:          opts.Common,
		ErrorBody:       apiErrors.ErrorBody,
		RetryAfterOn:    func(status int) bool { return status == http.StatusTooManyRequests },
		Auth:            s.authenticate,
		Respond:         s.respond,
		Lock:            &s.mu,
		WritesAnyStatus: true,
	}, s.State)
	s.routes()
	return s
}

// authenticate lets through a request bearing the current token or one
// of Options.Tokens, and answers the others 401.
func (s *Server) authenticate(r *http.Request) *simkit.Response {
	for _, t := range s.opts.Tokens {
		if simkit.HasBearer(r, t) {
			return nil
		}
	}
	return s.Authenticate(apiErrors.Error(http.StatusUnauthorized, msgUnauthorized))(r)
}

// TB is the part of testing.TB that NewServer needs.
type TB = simkit.TB

// NewServer starts a Server on a loopback port and closes it when the test
// ends.
func NewServer(t TB, opts Options) *Server {
	t.Helper()
	return simkit.StartForTest(t, New(opts))
}

// Env returns the environment variables that point the DigitalOcean
// provider at this cloud when it is served at baseURL.
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"DO_ACCESS_TOKEN": s.Token(),
		"DO_OVERRIDE_URL": baseURL,
		"REGION":          s.opts.Region,
	}
}

// handlerFunc serves one endpoint with the state locked. It returns the
// status and the value to encode as JSON (nil for no body).
type handlerFunc func(r *http.Request) (status int, body any)

func (s *Server) routes() {
	s.handle("GET /v2/account", s.getAccount)
	s.handle("GET /v2/regions", s.listRegions)
	s.handle("GET /v2/droplets", s.listDroplets)
	s.handle("DELETE /v2/droplets", s.deleteDropletsByTag)
	s.handle("GET /v2/droplets/{id}", s.getDroplet)
	s.handle("DELETE /v2/droplets/{id}", s.deleteDropletAPI)
	s.handle("GET /v2/droplets/{id}/firewalls", s.listDropletFirewalls)
	s.handle("GET /v2/droplets/{id}/actions", s.listDropletActions)
	s.handle("POST /v2/droplets/{id}/actions", s.postDropletAction)
	s.handle("GET /v2/droplets/{id}/actions/{action}", s.getDropletAction)
	s.handle("GET /v2/actions", s.listActions)
	s.handle("GET /v2/actions/{action}", s.getAction)
	s.handle("GET /v2/sizes", s.listSizes)
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
	s.handle("POST /v2/firewalls/{id}/droplets", s.addFirewallDroplets)
	s.handle("DELETE /v2/firewalls/{id}/droplets", s.removeFirewallDroplets)
	s.handle("POST /v2/firewalls/{id}/tags", s.addFirewallTags)
	s.handle("DELETE /v2/firewalls/{id}/tags", s.removeFirewallTags)
	s.handle("POST /v2/firewalls/{id}/rules", s.addFirewallRules)
	s.handle("DELETE /v2/firewalls/{id}/rules", s.removeFirewallRules)
	s.volumeRoutes()
	s.NotFound(func(r *http.Request) simkit.Response {
		return s.respond(r, "", apiErrors.Error(http.StatusNotFound, "no endpoint %s %s", r.Method, r.URL.Path))
	})
}

// handle registers an API endpoint behind the Kit: fault injection,
// authentication, rate-limit headers and the request log.
func (s *Server) handle(op string, h handlerFunc) { s.Handle(op, simkit.Answer(h)) }

// respond adds what every answer carries: the rate-limit headers and
// X-Request-Id (also in error bodies), and the API's Content-Type. Every
// answer uses up one of RateLimit.
func (s *Server) respond(_ *http.Request, _ string, resp simkit.Response) simkit.Response {
	s.mu.Lock()
	s.served++
	n := s.served
	s.mu.Unlock()
	requestID := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	h := resp.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("RateLimit-Limit", strconv.Itoa(RateLimit))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(RateLimit-n, 0)))
	h.Set("RateLimit-Reset", strconv.FormatInt(s.rateReset.Unix(), 10))
	h.Set("X-Request-Id", requestID)
	if resp.Body != nil {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	if e, ok := resp.Body.(apiError); ok {
		e.RequestID = requestID
		resp.Body = e
	}
	resp.Header = h
	return resp
}

func (s *Server) getAccount(*http.Request) (int, any) {
	return http.StatusOK, map[string]any{"account": map[string]any{
		"droplet_limit": 25000, "floating_ip_limit": 100, "reserved_ip_limit": 100, "volume_limit": 100,
		"email": "sammy@example.com", "name": "Sammy", "uuid": "b6fr89dbf6d9156cace5f3c78dc9851d957381ef",
		"email_verified": true, "status": "active", "status_message": "",
	}}
}
