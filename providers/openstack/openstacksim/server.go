package openstacksim

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	DefaultRegion            = "RegionOne"
	DefaultDomain            = "Default"
	DefaultUsername          = "ccm"
	DefaultPassword          = "ccm-secret"
	DefaultProject           = "kubernetes"
	DefaultTokenTTL          = 24 * time.Hour
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	// DefaultMaxLimit is Nova's osapi_max_limit and Octavia's
	// pagination_max_limit: the largest page either returns.
	DefaultMaxLimit = 1000
	// DefaultMaxRoutes is Neutron's max_routes quota per router.
	DefaultMaxRoutes = 30
	// DefaultOctaviaMinor is the newest Octavia API version advertised
	// (v2.27).
	DefaultOctaviaMinor = 27
	// DefaultCinderMinor is the newest Block Storage v3 microversion
	// served: 3.70 (Zed).
	DefaultCinderMinor = 70
)

// DefaultVolumeQuotas are the simulator's Cinder quotas when Options
// leave them 0: higher than Cinder's own defaults (10 volumes, 10
// snapshots, 1000 GiB), so that tests creating many volumes need not set
// them.
var DefaultVolumeQuotas = VolumeQuotas{Volumes: 1000, Snapshots: 1000, Gigabytes: 100000}

// VolumeQuotas are a project's Cinder quotas (os-quota-sets volumes,
// snapshots, gigabytes; snapshots count towards gigabytes, as with
// Cinder's default no_snapshot_gb_quota=false). 0 means the
// DefaultVolumeQuotas value, -1 no limit.
type VolumeQuotas struct {
	Volumes   int `json:"volumes,omitempty"`
	Snapshots int `json:"snapshots,omitempty"`
	Gigabytes int `json:"gigabytes,omitempty"`
}

// Fault is an injected API failure; see simkit.Fault. Op is an endpoint
// as Operations lists it ("GET /compute/v2.1/servers/detail"), a prefix
// ending in "*" ("* /load-balancer/*" for all of Octavia, "PUT
// /network/*"), a method alone ("POST"), or "" for every endpoint. The
// error body is the one of the service the request went to; Code, when
// set, is a Neutron error's type.
type Fault = simkit.Fault

// Request is one entry of the request log.
type Request = simkit.Request

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start, the latency of every
	// API request, the seed of faults with a Rate and the request logger.
	simkit.Common
	// Region is the catalog's region; "" means DefaultRegion.
	Region string
	// Users are the accounts Keystone accepts with password auth; none
	// means one: DefaultUsername / DefaultPassword in DefaultDomain,
	// scoped to DefaultProject.
	Users []User
	// ApplicationCredentials Keystone accepts, each belonging to a user of
	// Users (by name).
	ApplicationCredentials []ApplicationCredential
	// TokenTTL is how long an issued token is valid; 0 means
	// DefaultTokenTTL. ExpireTokens expires every token at once.
	TokenTTL time.Duration
	// NoAuth accepts requests without a valid X-Auth-Token.
	NoAuth bool
	// ProvisioningReads is how many reads (GET of it, its status tree, or
	// a list page holding it) of a PENDING_* load balancer it takes to
	// leave that state (the N-th read shows it ACTIVE, ERROR or gone), and
	// of a server to end its task (os-stop, os-start, delete); 0 means
	// DefaultProvisioningReads and a negative value settles every change
	// at once. Common.SettleAfter also settles them with time.
	ProvisioningReads int
	// MaxLimit caps Nova and Octavia pages; 0 means DefaultMaxLimit.
	// Neutron lists are unpaginated unless the client sends limit.
	MaxLimit int
	// MaxRoutes is Neutron's max_routes per router; 0 means
	// DefaultMaxRoutes.
	MaxRoutes int
	// OctaviaMinor is the newest Octavia API minor version advertised; 0
	// means DefaultOctaviaMinor. Clients such as the OpenStack CCM gate
	// features on it (tags need 2.5, VIP ACLs 2.12).
	OctaviaMinor int
	// CinderMinor is the newest Block Storage v3 microversion (3.x)
	// served and advertised; 0 means DefaultCinderMinor. An older cloud's
	// (e.g. 60, before in-use snapshots without force at 3.66) answers
	// newer requests 406.
	CinderMinor int
	// DisabledExtensions are Neutron extension aliases not to advertise,
	// e.g. "extraroute-atomic" to make clients fall back to full route
	// list updates.
	DisabledExtensions []string
	// NoDefaults starts with no networks, subnets, router or security
	// group; otherwise Defaults describes what New creates.
	NoDefaults bool
	// Hypervisor, when set, is told what happens to volumes' blocks: a
	// volume created (empty, from a snapshot or a clone), attached,
	// detached, extended, snapshotted or deleted, a snapshot deleted, with
	// simkit.Disk.ByIDName "virtio-" and the first 20 characters of the
	// volume ID (see ByIDName and the package doc). nil: volumes are
	// records only.
	Hypervisor simkit.Hypervisor
	// VolumeTypes are Cinder's volume types, the default first; none
	// means DefaultVolumeTypes.
	VolumeTypes []VolumeType
	// VolumeZones are Cinder's availability zones, the first the default
	// one; none means "nova" and every zone a server is in, so that
	// volumes can be made in each server's zone.
	VolumeZones []string
	// VolumeQuotas are each project's Cinder quotas (413 beyond them).
	VolumeQuotas VolumeQuotas
	// MaxDiskDevices is Nova's max_disk_devices_to_attach: the disks a
	// server may have, its root disk included (an attach beyond it is 403
	// TooManyDiskDevices); 0 means DefaultMaxDiskDevices.
	MaxDiskDevices int
}

// Server is a simulated OpenStack cloud: Keystone, Nova, Neutron,
// Octavia, Glance and Cinder on one listener. It is safe for concurrent use.
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency and
	// ClearFaults, and serves /_sim/stats and /_sim/state. Writes
	// counts the mutating requests answered 2xx, token requests
	// excluded.
	simkit.Base

	opts Options

	mu sync.Mutex
	st *state
	// ports, while a request views many servers (a list), is the index
	// serverView reads their ports from; nil otherwise. Guarded by mu.
	ports *portIndex
	// tokens maps issued tokens to what they stand for.
	tokens map[string]*token

	// otherOnce creates other, the other project (OtherProject).
	otherOnce sync.Once
	other     *Server
}

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener.
func New(opts Options) *Server {
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	opts.Users, opts.ApplicationCredentials = slices.Clone(opts.Users), slices.Clone(opts.ApplicationCredentials)
	opts.DisabledExtensions = slices.Clone(opts.DisabledExtensions)
	if len(opts.Users) == 0 {
		opts.Users = []User{{Name: DefaultUsername, Password: DefaultPassword}}
	}
	for i := range opts.Users {
		opts.Users[i].defaults(i)
	}
	for i := range opts.ApplicationCredentials {
		opts.ApplicationCredentials[i].defaults(i)
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.MaxLimit <= 0 {
		opts.MaxLimit = DefaultMaxLimit
	}
	if opts.MaxRoutes <= 0 {
		opts.MaxRoutes = DefaultMaxRoutes
	}
	if opts.CinderMinor <= 0 || opts.CinderMinor > DefaultCinderMinor {
		opts.CinderMinor = DefaultCinderMinor
	}
	if opts.OctaviaMinor <= 0 {
		opts.OctaviaMinor = DefaultOctaviaMinor
	}
	if opts.MaxDiskDevices <= 0 {
		opts.MaxDiskDevices = DefaultMaxDiskDevices
	}
	opts.VolumeTypes = normalizeVolumeTypes(opts.VolumeTypes)
	opts.VolumeZones = slices.Clone(opts.VolumeZones)
	for _, q := range []struct {
		v *int
		d int
	}{
		{&opts.VolumeQuotas.Volumes, DefaultVolumeQuotas.Volumes},
		{&opts.VolumeQuotas.Snapshots, DefaultVolumeQuotas.Snapshots},
		{&opts.VolumeQuotas.Gigabytes, DefaultVolumeQuotas.Gigabytes},
	} {
		if *q.v == 0 {
			*q.v = q.d
		}
	}
	s := &Server{
		opts:   opts,
		st:     newState(opts.Users[0].ProjectID, opts.ProvisioningReads),
		tokens: map[string]*token{},
	}
	s.Base = simkit.NewBase(simkit.Options{
		Common:    opts.Common,
		ErrorBody: errorBody,
		Auth:      s.authenticate,
		Respond:   withRequestID,
		Lock:      &s.mu,
	}, s.State)
	s.st.pending.WithTime(opts.SettleAfter, &s.mu)
	s.st.serverTasks.WithTime(opts.SettleAfter, &s.mu)
	s.st.volumeTasks.WithTime(opts.SettleAfter, &s.mu)
	if !opts.NoDefaults {
		s.addDefaults()
	}
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

// AuthURL is the Keystone URL clients authenticate against
// (URL()+"/identity/v3").
func (s *Server) AuthURL() string { return s.URL() + identityPrefix + "/v3" }

// Region is the region the catalog advertises.
func (s *Server) Region() string { return s.opts.Region }

func (s *Server) routes() {
	s.keystoneRoutes()
	s.novaRoutes()
	s.neutronRoutes()
	s.octaviaRoutes()
	s.glanceRoutes()
	s.cinderRoutes()
	s.metadataRoutes()
	s.HandleFunc("GET /_sim/cloud.conf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(s.CloudConfigFor(simkit.BaseURL(r))))
	})
	s.NotFound(notFoundAnswer)
}
