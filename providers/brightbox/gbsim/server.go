package gbsim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	// DefaultAccount is the account every resource belongs to.
	DefaultAccount = "acc-43ks4"
	// DefaultClientID and DefaultClientSecret are the API client's
	// credentials (client_credentials grant).
	DefaultClientID     = "cli-dsse2"
	DefaultClientSecret = "gbsim-client-secret" //nolint:gosec // the simulator's test credential
	// DefaultAppID and DefaultAppSecret are the OAuth application users
	// log in through (password grant): the one the existing CCM's k8ssdk
	// uses when BRIGHTBOX_CLIENT is unset.
	DefaultAppID     = "app-dkmch"
	DefaultAppSecret = "uogoelzgt0nwawb" //nolint:gosec // the public application identifier k8ssdk ships, not a secret
	// DefaultUsername and DefaultPassword are the user of the password
	// grant.
	DefaultUsername = "jjarvis@example.com"
	DefaultPassword = "gbsim-password"
	// DefaultZone is the zone of servers added without one.
	DefaultZone = "gb1-a"
	// DefaultServerType is the server type of servers added without one.
	DefaultServerType = "2gb.ssd"
	// DefaultProvisioningReads: see Options.ProvisioningReads.
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	// DefaultDeletedReads: see Options.DeletedReads.
	DefaultDeletedReads = 3
	// DefaultTokenTTL is the lifetime of an access token (expires_in).
	DefaultTokenTTL = simkit.DefaultOAuth2TTL
	// DefaultLimit is the account's cloud IP and load balancer limit when
	// Options leave it 0.
	DefaultLimit = 1000
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start, the latency of every
	// API request, the seed of faults with a Rate and the request logger.
	simkit.Common
	// Account is the account ID (acc-xxxxx) the credentials reach; ""
	// means DefaultAccount.
	Account string
	// ClientID and ClientSecret are the API client (cli-xxxxx) the
	// client_credentials grant accepts; "" means DefaultClientID and
	// DefaultClientSecret.
	ClientID, ClientSecret string
	// AppID and AppSecret are the OAuth application the password grant
	// accepts; "" means DefaultAppID and DefaultAppSecret.
	AppID, AppSecret string
	// Username and Password are the user the password grant accepts; ""
	// means DefaultUsername and DefaultPassword.
	Username, Password string
	// Clients are more API clients of the account, beside ClientID: the
	// client_credentials grant accepts each (an account may have many).
	Clients []APIClient
	// Users are more users the password grant accepts, beside Username
	// (collaborators of the account).
	Users []User
	// TokenTTL is how long an access token lasts (expires_in); 0 means
	// DefaultTokenTTL.
	TokenTTL time.Duration
	// Now is the token endpoint's clock; nil means time.Now.
	Now func() time.Time
	// ProvisioningReads is how many reads (a GET of it, or a list holding
	// it) a pending load balancer (creating, deleting), ACME domain
	// (pending) or volume (creating, being attached or detached,
	// deleting) takes to settle; 0 means DefaultProvisioningReads, a
	// negative value settles them at once.
	ProvisioningReads int
	// MappingReads is how many reads (of the cloud IP or the load
	// balancer) a cloud IP mapped onto a load balancer takes to show as
	// mapped; 0 maps at once.
	MappingReads int
	// CloudIPsLimit and LoadBalancersLimit are the account's limits: a
	// create beyond them gets 403 Forbidden "Account limit reached"; 0
	// means DefaultLimit.
	CloudIPsLimit, LoadBalancersLimit int
	// DeletedReads is how many list reads a deleted load balancer,
	// server or volume stays visible for; 0 means DefaultDeletedReads, a
	// negative value removes it at once.
	DeletedReads int
	// VolumesPerServer is how many volumes one server can have attached
	// (one more is 422); 0 means DefaultVolumesPerServer, the documented
	// "up to 6 in total".
	VolumesPerServer int
	// BlockStorageLimit is the account's block storage, in MiB: a create
	// or resize beyond it gets 403 Forbidden "Account limit reached"; 0
	// means DefaultBlockStorageLimit.
	BlockStorageLimit int
	// Hypervisor, when set, is told what happens to volumes' blocks: a
	// volume created, attached, detached, resized or deleted (see
	// simkit.Hypervisor and the package doc). nil: volumes are records
	// only.
	Hypervisor simkit.Hypervisor
}

// APIClient is an API client's credentials: its ID (cli-xxxxx) and
// secret.
type APIClient struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// User is a user's credentials for the password grant.
type User struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Server is a simulated Brightbox API 1.0 with its OAuth2 token endpoint.
// It is safe for concurrent use.
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency, Inject,
	// Fail, RateLimit, ClearFaults and Operations, and serves /_sim/stats
	// and /_sim/state.
	simkit.Base

	opts  Options
	oauth *simkit.OAuth2

	mu sync.Mutex
	st *state

	corruptMu sync.Mutex
	corrupt   []*corruption

	otherOnce sync.Once
	other     atomic.Pointer[Server] // another account, served on this URL (OtherAccountServer)
}

// Request is one entry of the request log.
type Request = simkit.Request

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener.
func New(opts Options) *Server { return newServer(opts, numbering{}) }

// newServer is New for an account whose counters start at from.
func newServer(opts Options, from numbering) *Server {
	opts = withDefaults(opts)
	s := &Server{opts: opts}
	s.oauth = simkit.NewOAuth2(simkit.OAuth2Options{TTL: opts.TokenTTL, Now: opts.Now})
	s.oauth.SetClient(opts.ClientID, opts.ClientSecret)
	s.oauth.SetClient(opts.AppID, opts.AppSecret)
	s.oauth.SetUser(opts.Username, opts.Password)
	for _, c := range opts.Clients {
		s.oauth.SetClient(c.ID, c.Secret)
	}
	for _, u := range opts.Users {
		s.oauth.SetUser(u.Username, u.Password)
	}
	s.st = newState(opts, from, &s.mu)
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
	o.Account = cmp.Or(o.Account, DefaultAccount)
	o.ClientID = cmp.Or(o.ClientID, DefaultClientID)
	o.ClientSecret = cmp.Or(o.ClientSecret, DefaultClientSecret)
	o.AppID = cmp.Or(o.AppID, DefaultAppID)
	o.AppSecret = cmp.Or(o.AppSecret, DefaultAppSecret)
	o.Username = cmp.Or(o.Username, DefaultUsername)
	o.Password = cmp.Or(o.Password, DefaultPassword)
	if o.CloudIPsLimit <= 0 {
		o.CloudIPsLimit = DefaultLimit
	}
	if o.LoadBalancersLimit <= 0 {
		o.LoadBalancersLimit = DefaultLimit
	}
	if o.DeletedReads == 0 {
		o.DeletedReads = DefaultDeletedReads
	}
	if o.VolumesPerServer <= 0 {
		o.VolumesPerServer = DefaultVolumesPerServer
	}
	if o.BlockStorageLimit <= 0 {
		o.BlockStorageLimit = DefaultBlockStorageLimit
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

// Env returns the environment variables that point the Brightbox provider
// (and the existing CCM) at this cloud served at baseURL, with the API
// client's credentials.
func (s *Server) Env(baseURL string) map[string]string {
	return map[string]string{
		"BRIGHTBOX_CLIENT":        s.opts.ClientID,
		"BRIGHTBOX_CLIENT_SECRET": s.ClientSecret(),
		"BRIGHTBOX_API_URL":       baseURL,
		"BRIGHTBOX_ACCOUNT":       s.opts.Account,
	}
}

// UserEnv returns the environment variables that point the provider at
// this cloud served at baseURL as a user (password grant through the
// default application client, as the existing CCM does without
// BRIGHTBOX_CLIENT).
func (s *Server) UserEnv(baseURL string) map[string]string {
	return map[string]string{
		"BRIGHTBOX_USER_NAME": s.opts.Username,
		"BRIGHTBOX_PASSWORD":  s.opts.Password,
		"BRIGHTBOX_API_URL":   baseURL,
		"BRIGHTBOX_ACCOUNT":   s.opts.Account,
	}
}

// Account is the account ID every resource belongs to.
func (s *Server) Account() string { return s.opts.Account }

// ClientID is the API client the client_credentials grant accepts.
func (s *Server) ClientID() string { return s.opts.ClientID }

// ClientSecret is the API client's current secret.
func (s *Server) ClientSecret() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.ClientSecret
}

// SetClientSecret rotates the API client's secret: the old one is refused
// from now on (tokens already issued stay valid until they expire).
func (s *Server) SetClientSecret(secret string) {
	s.mu.Lock()
	s.opts.ClientSecret = secret
	s.mu.Unlock()
	s.oauth.SetClient(s.opts.ClientID, secret)
}

// AddClient makes the client_credentials grant accept another API client
// of the account (Options.Clients), or rotates its secret.
func (s *Server) AddClient(id, secret string) { s.oauth.SetClient(id, secret) }

// SetUser makes the password grant accept username with password too.
func (s *Server) SetUser(username, password string) { s.oauth.SetUser(username, password) }

// ExpireTokens makes every access token issued so far expire: the next API
// request with one gets 401, and the client must fetch another.
func (s *Server) ExpireTokens() { s.oauth.ExpireTokens() }

// TokenRequests counts the requests to the token endpoint, failed ones
// included.
func (s *Server) TokenRequests() int {
	st := s.Stats()
	return st[opToken] + st[opTokenNoSlash]
}

// Token endpoint operations: gobrightbox posts to /token/, k8ssdk to
// /token.
const (
	opToken        = "POST /token/" //nolint:gosec // an endpoint, not a credential
	opTokenNoSlash = "POST /token"
)

// Scopes are the OAuth2 scopes Brightbox grants: the API's and Orbit's
// (endpoint.InfrastructureScope, OrbitScope).
var Scopes = []string{"infrastructure", "orbit"}

// token serves the token endpoint (simkit.OAuth2), refusing a scope
// Brightbox does not grant with invalid_scope (RFC 6749 §5.2).
func (s *Server) token(r *http.Request) simkit.Response {
	if err := r.ParseForm(); err == nil {
		for scope := range strings.FieldsSeq(r.PostForm.Get("scope")) {
			if !slices.Contains(Scopes, scope) {
				return simkit.Response{Status: http.StatusBadRequest, Header: http.Header{"Cache-Control": {"no-store"}},
					Body: map[string]string{"error": "invalid_scope", "error_description": "unknown scope " + scope}}
			}
		}
	}
	return s.oauth.Token(r)
}

// authenticate lets through requests with a valid bearer token for the
// account: an expired or unknown token gets 401 (the OAuth2 error body
// and a WWW-Authenticate challenge), an account_id other than the
// account's 403.
func (s *Server) authenticate(r *http.Request) *simkit.Response {
	if _, err := s.oauth.Check(r); err != nil {
		resp := simkit.JSON(http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": err.Error()})
		resp.Header = http.Header{"Www-Authenticate": {simkit.BearerChallenge("Brightbox API", err)}}
		return &resp
	}
	if acc := r.URL.Query().Get("account_id"); acc != "" && acc != s.opts.Account {
		resp := fail(http.StatusForbidden, "You do not have access to account %s", acc)
		return &resp
	}
	return nil
}

func (s *Server) routes() {
	s.Handle(opToken, s.token, simkit.NoAuth, simkit.NoWrite)
	s.Handle(opTokenNoSlash, s.token, simkit.NoAuth, simkit.NoWrite)
	s.Handle("GET /1.0/accounts", s.listAccounts)
	s.Handle("GET /1.0/accounts/{id}", s.getAccount)
	s.Handle("GET /1.0/zones", s.listZones)
	s.Handle("GET /1.0/zones/{id}", s.getZone)
	s.Handle("GET /1.0/server_types", s.listServerTypes)
	s.Handle("GET /1.0/server_types/{id}", s.getServerType)
	s.Handle("GET /1.0/servers", s.listServers)
	s.Handle("GET /1.0/servers/{id}", s.getServer)
	s.Handle("PUT /1.0/servers/{id}/lock_resource", s.lockServer(true))
	s.Handle("PUT /1.0/servers/{id}/unlock_resource", s.lockServer(false))
	s.Handle("GET /1.0/interfaces/{id}", s.getInterface)
	s.lbRoutes()
	s.Handle("GET /1.0/cloud_ips", s.listCloudIPs)
	s.Handle("POST /1.0/cloud_ips", s.createCloudIP)
	s.Handle("GET /1.0/cloud_ips/{id}", s.getCloudIP)
	s.Handle("PUT /1.0/cloud_ips/{id}", s.updateCloudIP)
	s.Handle("DELETE /1.0/cloud_ips/{id}", s.deleteCloudIP)
	s.Handle("POST /1.0/cloud_ips/{id}/map", s.mapCloudIP)
	s.Handle("POST /1.0/cloud_ips/{id}/unmap", s.unmapCloudIP)
	s.Handle("GET /1.0/server_groups", s.listServerGroups)
	s.Handle("POST /1.0/server_groups", s.createServerGroup)
	s.Handle("GET /1.0/server_groups/{id}", s.getServerGroup)
	s.Handle("PUT /1.0/server_groups/{id}", s.updateServerGroup)
	s.Handle("DELETE /1.0/server_groups/{id}", s.deleteServerGroup)
	s.Handle("POST /1.0/server_groups/{id}/add_servers", s.addServers)
	s.Handle("POST /1.0/server_groups/{id}/remove_servers", s.removeServers)
	s.Handle("POST /1.0/server_groups/{id}/move_servers", s.moveServers)
	s.firewallRoutes()
	s.volumeRoutes()
	s.NotFound(func(r *http.Request) simkit.Response {
		return fail(http.StatusNotFound, "no endpoint %s %s", r.Method, r.URL.Path)
	})
}

func (s *Server) lbRoutes() {
	s.Handle("GET /1.0/load_balancers", s.listLoadBalancers)
	s.Handle("POST /1.0/load_balancers", s.createLoadBalancer)
	s.Handle("GET /1.0/load_balancers/{id}", s.getLoadBalancer)
	s.Handle("PUT /1.0/load_balancers/{id}", s.updateLoadBalancer)
	s.Handle("DELETE /1.0/load_balancers/{id}", s.deleteLoadBalancer)
	s.Handle("POST /1.0/load_balancers/{id}/add_nodes", s.addNodes)
	s.Handle("POST /1.0/load_balancers/{id}/remove_nodes", s.removeNodes)
	s.Handle("POST /1.0/load_balancers/{id}/add_listeners", s.addListeners)
	s.Handle("POST /1.0/load_balancers/{id}/remove_listeners", s.removeListeners)
	s.Handle("PUT /1.0/load_balancers/{id}/lock_resource", s.lockLoadBalancer(true))
	s.Handle("PUT /1.0/load_balancers/{id}/unlock_resource", s.lockLoadBalancer(false))
}

func (s *Server) firewallRoutes() {
	s.Handle("GET /1.0/firewall_policies", s.listFirewallPolicies)
	s.Handle("POST /1.0/firewall_policies", s.createFirewallPolicy)
	s.Handle("GET /1.0/firewall_policies/{id}", s.getFirewallPolicy)
	s.Handle("PUT /1.0/firewall_policies/{id}", s.updateFirewallPolicy)
	s.Handle("DELETE /1.0/firewall_policies/{id}", s.deleteFirewallPolicy)
	s.Handle("POST /1.0/firewall_policies/{id}/apply_to", s.applyFirewallPolicy)
	s.Handle("POST /1.0/firewall_policies/{id}/remove", s.removeFirewallPolicy)
	s.Handle("GET /1.0/firewall_rules", s.listFirewallRules)
	s.Handle("POST /1.0/firewall_rules", s.createFirewallRule)
	s.Handle("GET /1.0/firewall_rules/{id}", s.getFirewallRule)
	s.Handle("PUT /1.0/firewall_rules/{id}", s.updateFirewallRule)
	s.Handle("DELETE /1.0/firewall_rules/{id}", s.deleteFirewallRule)
}

// url is the API URL of a resource, as the API writes it in "url".
func (v view) url(collection, id string) string {
	return fmt.Sprintf("%s/1.0/%s/%s", v.base, collection, id)
}
