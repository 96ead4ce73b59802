package tritonsim

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults for Options.
const (
	// DefaultAccount is the account's login: the path prefix of every
	// endpoint and the account of the default key's keyId.
	DefaultAccount = "ccmkit"
	// DefaultDatacenter is the datacenter the CloudAPI serves.
	DefaultDatacenter = "us-east-1"
	// DefaultPackage is the package of machines added without one.
	DefaultPackage = "g4-highcpu-1G"
	// LoadBalancerImage is the name of Triton's Moirai load balancer
	// image.
	LoadBalancerImage = "cloud-load-balancer"
	// DefaultProvisioningReads: see Options.ProvisioningReads.
	DefaultProvisioningReads = simkit.DefaultProvisioningReads
	// DefaultGoneReads: see Options.GoneReads.
	DefaultGoneReads = 3
	// DefaultComputeNodes: see Options.ComputeNodes.
	DefaultComputeNodes = 3
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Common are the faults injected from the start, the latency of every
	// API request, the seed of faults with a Rate and of the IDs, and the
	// request logger.
	simkit.Common
	// Account is the account's login; "" means DefaultAccount.
	Account string
	// AccountID is the account's UUID, which CNS names hold; "" means
	// one derived from the seed.
	AccountID string
	// Datacenter is the datacenter's name; "" means DefaultDatacenter.
	Datacenter string
	// CNSDisabled turns the account's triton_cns_enabled off.
	CNSDisabled bool
	// CNSPublicZone and CNSPrivateZone are the CNS zones of public and
	// private (fabric) NICs; "" means "<dc>.triton.zone" and
	// "<dc>.cns.joyent.com", as in the Joyent public cloud.
	CNSPublicZone, CNSPrivateZone string
	// NoLoadBalancerImage leaves the cloud-load-balancer image out of
	// the seeded images (a datacenter whose operator did not import it).
	NoLoadBalancerImage bool
	// PrivateKeyPEM is the account key (PKCS #1 PEM); nil means the
	// simulator's fixed key, so every run signs alike.
	PrivateKeyPEM []byte
	// KeyName is the account key's name in ListKeys; "" means
	// DefaultKeyName.
	KeyName string
	// Limits are the account's provisioning limits (CloudAPI's
	// provision_limits plugin), as GetAccountLimits serves them with
	// their use; none means the plugin is off: an empty list, and no
	// limit on creates.
	Limits []Limit
	// KeyFile, when set, is where the account key's PEM is kept on disk
	// (WriteKeyFile writes it): Env then gives its path as
	// TRITON_KEY_MATERIAL, for environments that cannot hold a multi-line
	// value (cmd/cloudsim's printed variables).
	KeyFile string
	// ProvisioningReads is how many reads (a GET of it, or a list page
	// holding it) a machine being provisioned, stopped or started takes
	// to settle; 0 means DefaultProvisioningReads, negative settles at
	// once.
	ProvisioningReads int
	// GoneReads is how many GETs of a deleted machine answer 410 Gone
	// before its history is purged and it answers 404; 0 means
	// DefaultGoneReads, negative purges at once.
	GoneReads int
	// ComputeNodes is how many compute nodes machines are spread over;
	// 0 means DefaultComputeNodes.
	ComputeNodes int
	// NoVolumes leaves out RFD 26 volumes, as a datacenter without
	// experimental_cloudapi_nfs_shared_volumes (CloudAPI's default) has
	// none: /{account}/volumes and /volumesizes are 404 ResourceNotFound.
	NoVolumes bool
	// VolumeSizes are the sizes, in MiB, CreateVolume accepts (the
	// datacenter's sdc_volume_nfs_* packages); nil means
	// DefaultVolumeSizes. The smallest is the default.
	VolumeSizes []int64
	// NFSExportDir is the directory under which each volume's NFS export
	// is a directory named by the volume's ID (VolumeExportDir); "" means
	// a temporary directory made when the first export is, removed by
	// Close.
	NFSExportDir string
	// MaxClockSkew is how far a request's Date may be from Now; 0 means
	// five minutes.
	MaxClockSkew time.Duration
	// Now is the server's clock; nil means time.Now.
	Now func() time.Time
}

// Server is a simulated Triton CloudAPI. It is safe for concurrent use.
type Server struct {
	// Base brings Start, Close, URL, Handler, Stats, Writes,
	// InjectedLatency, Requests, ResetConnections, SetLatency, Inject,
	// Fail, RateLimit, ClearFaults and Operations, and serves /_sim/stats
	// and /_sim/state.
	simkit.Base

	opts Options
	sig  *simkit.HTTPSignature
	key  accountKey
	cmon *cmonService

	mu sync.Mutex
	st *state

	otherOnce sync.Once
	other     *Server // another account, served on this URL (OtherAccountServer)
}

// Request is one entry of the request log.
type Request = simkit.Request

// New returns a Server that is not listening yet: call Start, or mount
// Handler at the root of a listener. It panics if Options.PrivateKeyPEM
// is not an RSA key in PKCS #1 PEM.
func New(opts Options) *Server { return newServer(opts, numbering{}) }

// newServer is New for an account whose counters start at from.
func newServer(opts Options, from numbering) *Server {
	opts = withDefaults(opts)
	s := &Server{opts: opts}
	s.sig = simkit.NewHTTPSignature(simkit.SignatureOptions{MaxSkew: opts.MaxClockSkew, Now: opts.Now})
	keyPEM := opts.PrivateKeyPEM
	if keyPEM == nil {
		keyPEM = defaultKeyPEM
	}
	key, err := loadAccountKey(keyPEM)
	if err != nil {
		panic("tritonsim: " + err.Error())
	}
	s.key = key
	if s.cmon, err = newCMONService(opts.CNSPublicZone, time.Now()); err != nil {
		panic("tritonsim: " + err.Error())
	}
	s.st = newState(opts, from, &s.mu)
	pub, err := ssh.NewPublicKey(&key.private.PublicKey)
	if err == nil {
		_, err = s.addAccountKey(opts.KeyName, pub)
	}
	if err != nil {
		panic("tritonsim: " + err.Error())
	}
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
	o.Datacenter = cmp.Or(o.Datacenter, DefaultDatacenter)
	o.KeyName = cmp.Or(o.KeyName, DefaultKeyName)
	o.CNSPublicZone = cmp.Or(o.CNSPublicZone, o.Datacenter+".triton.zone")
	o.CNSPrivateZone = cmp.Or(o.CNSPrivateZone, o.Datacenter+".cns.joyent.com")
	if o.GoneReads == 0 {
		o.GoneReads = DefaultGoneReads
	}
	if o.ComputeNodes <= 0 {
		o.ComputeNodes = DefaultComputeNodes
	}
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

// Env returns the environment variables that point the Triton provider
// (and triton-go's own tools) at this cloud served at baseURL, signing
// with the account key: TRITON_KEY_MATERIAL is the key's PEM, or the path
// of Options.KeyFile when set. While CMON is served (Start,
// ServeCompanions) it adds what the provider's metrics controller needs to
// reach it: TRITON_CMON_URL, and with Options.KeyFile set
// TRITON_CMON_CA_FILE, the path of CMON's CA certificate (CMONCAFile,
// which WriteKeyFile writes).
func (s *Server) Env(baseURL string) map[string]string {
	key := s.currentKey()
	env := map[string]string{
		"TRITON_URL":          baseURL,
		"TRITON_ACCOUNT":      s.opts.Account,
		"TRITON_KEY_ID":       key.md5,
		"TRITON_KEY_MATERIAL": cmp.Or(s.opts.KeyFile, string(key.pem)),
	}
	if u := s.CMONURL(); u != "" {
		env["TRITON_CMON_URL"] = u
		if f := s.CMONCAFile(); f != "" {
			env["TRITON_CMON_CA_FILE"] = f
		}
	}
	return env
}

// CMONCAFile is where WriteKeyFile writes CMON's CA certificate
// (CMONCAPEM): next to Options.KeyFile, its name ending -cmon-ca.pem
// instead of .pem; "" without a KeyFile.
func (s *Server) CMONCAFile() string {
	if s.opts.KeyFile == "" {
		return ""
	}
	return strings.TrimSuffix(s.opts.KeyFile, ".pem") + "-cmon-ca.pem"
}

// WriteKeyFile writes the account key's PEM to Options.KeyFile (mode
// 0600), CMON's CA certificate to CMONCAFile, and the private half of
// each key a scenario generated to its keyFile (0600); it does nothing
// when Options.KeyFile is unset.
func (s *Server) WriteKeyFile() error {
	if s.opts.KeyFile == "" {
		return nil
	}
	if err := os.WriteFile(s.opts.KeyFile, s.currentKey().pem, 0o600); err != nil {
		return fmt.Errorf("writing the account key: %w", err)
	}
	if err := os.WriteFile(s.CMONCAFile(), s.CMONCAPEM(), 0o600); err != nil {
		return fmt.Errorf("writing CMON's CA certificate: %w", err)
	}
	for _, k := range s.Keys() {
		if k.keyFile == "" {
			continue
		}
		if err := os.WriteFile(k.keyFile, k.privatePEM, 0o600); err != nil {
			return fmt.Errorf("writing key %s: %w", k.Name, err)
		}
	}
	return nil
}

// Account is the account's login.
func (s *Server) Account() string { return s.opts.Account }

// Datacenter is the datacenter's name.
func (s *Server) Datacenter() string { return s.opts.Datacenter }

// MyAccount is the path's account that names the caller's own account,
// whichever it is (sdc-cloudapi lib/auth.js loadAccount): /my/machines is
// the signer's /<login>/machines, a sub-user's its account's.
const MyAccount = "my"

// authenticate lets through requests signed (HTTP Signature) by a key of
// the account the path names (or "my"), or of one of its sub-users: a
// missing or bad signature gets 401, another account's path 403
// NotAuthorized.
func (s *Server) authenticate(r *http.Request) *simkit.Response {
	signer, err := s.sig.Verify(r)
	if err != nil {
		code := codeInvalidCreds
		if errors.Is(err, simkit.ErrBadSignature) || errors.Is(err, simkit.ErrClockSkew) {
			code = codeInvalidSignature
		}
		resp := failCode(http.StatusUnauthorized, code, "%s", err.Error())
		return &resp
	}
	acct := r.PathValue("account")
	if acct == MyAccount {
		acct = signer.Account
	}
	if acct != signer.Account || acct != s.opts.Account {
		resp := failCode(http.StatusForbidden, codeNotAuthorized, "%s is not allowed to access %s", signer.Account, r.URL.Path)
		return &resp
	}
	return nil
}

// respond adds the headers every CloudAPI answer carries (not CMON's).
func (s *Server) respond(_ *http.Request, op string, resp simkit.Response) simkit.Response {
	if cmonOp(op) {
		return resp
	}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set("Server", "cloudapi/9.20.0")
	resp.Header.Set("Api-Version", "9.20.0")
	return resp
}

func (s *Server) routes() {
	s.Handle("GET /--ping", s.ping, simkit.NoAuth)
	s.HandleFunc("GET /_sim/cns", s.serveCNS)
	s.Handle("GET /{account}", s.getAccount)
	s.Handle("GET /{account}/limits", s.getLimits)
	s.Handle("GET /{account}/keys", s.listKeys)
	s.Handle("POST /{account}/keys", s.createKey)
	s.Handle("GET /{account}/keys/{name}", s.getKey)
	s.Handle("DELETE /{account}/keys/{name}", s.deleteKey)
	s.machineRoutes()
	s.Handle("GET /{account}/networks", s.listNetworks)
	s.Handle("GET /{account}/networks/{id}", s.getNetwork)
	s.Handle("GET /{account}/fabrics/default/vlans", s.listVLANs)
	s.Handle("GET /{account}/fabrics/default/vlans/{vlan}", s.getVLAN)
	s.Handle("GET /{account}/fabrics/default/vlans/{vlan}/networks", s.listVLANNetworks)
	s.Handle("GET /{account}/packages", s.listPackages)
	s.Handle("GET /{account}/packages/{id}", s.getPackage)
	s.Handle("GET /{account}/images", s.listImages)
	s.Handle("GET /{account}/images/{id}", s.getImage)
	s.Handle("GET /{account}/datacenters", s.listDatacenters)
	s.Handle("GET /{account}/datacenters/{name}", s.getDatacenter)
	s.Handle("GET /{account}/services", s.listServices)
	s.fwRoutes()
	s.volumeRoutes()
	s.cmonRoutes()
	s.NotFound(func(r *http.Request) simkit.Response {
		return failCode(http.StatusNotFound, codeNotFound, "%s %s does not exist", r.Method, r.URL.Path)
	})
}

func (s *Server) machineRoutes() {
	s.Handle("GET /{account}/machines", s.listMachines)
	s.Handle("HEAD /{account}/machines", s.countMachines)
	s.Handle("POST /{account}/machines", s.createMachine)
	s.Handle("GET /{account}/machines/{id}", s.getMachine)
	s.Handle("POST /{account}/machines/{id}", s.machineAction)
	s.Handle("DELETE /{account}/machines/{id}", s.deleteMachine)
	s.Handle("GET /{account}/machines/{id}/audit", s.machineAudit)
	s.Handle("GET /{account}/machines/{id}/nics", s.listNICs)
	s.Handle("GET /{account}/machines/{id}/nics/{mac}", s.getNIC)
	s.Handle("GET /{account}/machines/{id}/tags", machineTags.list(s))
	s.Handle("POST /{account}/machines/{id}/tags", s.addTags)
	s.Handle("PUT /{account}/machines/{id}/tags", s.replaceTags)
	s.Handle("DELETE /{account}/machines/{id}/tags", machineTags.deleteAll(s))
	s.Handle("GET /{account}/machines/{id}/tags/{key}", machineTags.get(s))
	s.Handle("DELETE /{account}/machines/{id}/tags/{key}", machineTags.delete(s))
	s.Handle("GET /{account}/machines/{id}/metadata", machineMetadata.list(s))
	s.Handle("POST /{account}/machines/{id}/metadata", s.updateMetadata)
	s.Handle("DELETE /{account}/machines/{id}/metadata", machineMetadata.deleteAll(s))
	s.Handle("GET /{account}/machines/{id}/metadata/{key}", machineMetadata.get(s))
	s.Handle("DELETE /{account}/machines/{id}/metadata/{key}", machineMetadata.delete(s))
	s.Handle("GET /{account}/machines/{id}/fwrules", s.listMachineRules)
}

func (s *Server) fwRoutes() {
	s.Handle("GET /{account}/fwrules", s.listRules)
	s.Handle("POST /{account}/fwrules", s.createRule)
	s.Handle("GET /{account}/fwrules/{id}", s.getRule)
	s.Handle("POST /{account}/fwrules/{id}", s.updateRule)
	s.Handle("DELETE /{account}/fwrules/{id}", s.deleteRule)
	s.Handle("POST /{account}/fwrules/{id}/enable", s.enableRule(true))
	s.Handle("POST /{account}/fwrules/{id}/disable", s.enableRule(false))
	s.Handle("GET /{account}/fwrules/{id}/machines", s.listRuleMachines)
}
