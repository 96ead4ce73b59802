package tritonsim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// CMONPort is the port CMON serves on in a Triton datacenter.
const CMONPort = 9163

// cmonService is Container Monitor (triton-cmon), which Triton serves
// apart from CloudAPI: its own TLS listener, which asks every client for
// a certificate and lets the handlers judge it (restify's requestCert
// without rejectUnauthorized), and its own server certificate, self-signed
// (the simulator's CA).
type cmonService struct {
	mux     *http.ServeMux
	cert    tls.Certificate
	certPEM []byte

	mu sync.Mutex
	ts *httptest.Server
}

// newCMONService makes the service's server certificate: ECDSA P-256, for
// 127.0.0.1, ::1, localhost, cmon.<zone> and *.cmon.<zone> (the per-
// machine hosts), valid for a year from now (the real clock, which TLS
// clients check it by, not Options.Now).
func newCMONService(zone string, now time.Time) (*cmonService, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CMON's server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "cmon." + zone},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost", "cmon." + zone, "*.cmon." + zone},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("CMON's server certificate: %w", err)
	}
	return &cmonService{
		mux:     http.NewServeMux(),
		cert:    tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// start serves CMON on a loopback port unless it is served already; it
// reports whether it started it.
func (c *cmonService) start() (started bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts != nil {
		return false, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, fmt.Errorf("CMON's listener: %w", err)
	}
	c.ts = &httptest.Server{Listener: ln, Config: &http.Server{Handler: c.mux, ReadHeaderTimeout: 10 * time.Second}}
	c.ts.TLS = &tls.Config{
		Certificates: []tls.Certificate{c.cert},
		ClientAuth:   tls.RequestClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	c.ts.StartTLS()
	return true, nil
}

func (c *cmonService) close() {
	c.mu.Lock()
	ts := c.ts
	c.ts = nil
	c.mu.Unlock()
	if ts != nil {
		ts.Close()
	}
}

func (c *cmonService) url() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts == nil {
		return ""
	}
	// By name, as CMON is known (Prometheus scrapes <machine>.<CMON host>,
	// which needs a DNS name); its certificate names localhost.
	return strings.Replace(c.ts.URL, "://127.0.0.1:", "://localhost:", 1)
}

// Start serves CloudAPI and its companions (ServeCompanions), each on a
// loopback port.
func (s *Server) Start() {
	s.Base.Start()
	if _, err := s.ServeCompanions(); err != nil {
		panic("tritonsim: " + err.Error())
	}
}

// ServeCompanions serves what the simulator advertises besides CloudAPI,
// which Handler serves: CMON on its own TLS listener, on a loopback port,
// unless it is served already, so that the services list (cmon) and Env
// (TRITON_CMON_URL) give a URL that answers. stop closes what it started
// (nothing, when CMON was served already); Close closes it too. A program
// that mounts Handler itself (cmd/cloudsim) calls it before Env.
func (s *Server) ServeCompanions() (stop func(), err error) {
	started, err := s.cmon.start()
	if err != nil || !started {
		return func() {}, err
	}
	return s.cmon.close, nil
}

// Close stops serving CloudAPI and CMON, and removes the volumes' NFS
// exports when their directory is one the Server made (NFSExportDir).
func (s *Server) Close() {
	s.cmon.close()
	s.Base.Close()
	_ = s.exports().close()
}

// CMONURL is CMON's base URL once the Server is started, e.g.
// "https://localhost:41235"; "" before. CloudAPI's ListServices gives it
// as "cmon".
func (s *Server) CMONURL() string { return s.cmon.url() }

// CMONCAPEM is the PEM of CMON's self-signed server certificate: the CA a
// client trusts to reach CMONURL (it also names localhost and
// cmon.<public CNS zone>).
func (s *Server) CMONCAPEM() []byte { return append([]byte(nil), s.cmon.certPEM...) }

// CMONHandler serves CMON's endpoints, for mounting on a TLS listener of
// one's own that requests client certificates (tls.RequestClientCert):
// without one every request is refused.
func (s *Server) CMONHandler() http.Handler { return s.cmon.mux }

// cmonEndpoint is the endpoint ListServices gives as "cmon": the running
// listener, else the public cloud's form of the address.
func (s *Server) cmonEndpoint() string {
	if u := s.CMONURL(); u != "" {
		return u
	}
	return fmt.Sprintf("https://cmon.%s:%d", s.opts.CNSPublicZone, CMONPort)
}

// cmonOp reports whether op is one of CMON's endpoints, whose answers do
// not carry CloudAPI's headers.
func cmonOp(op string) bool { return strings.HasPrefix(op, "GET /v1/") }

func (s *Server) cmonRoutes() {
	s.Kit().Handle(s.cmon.mux, "GET /v1/discover", s.cmonDiscover, simkit.NoAuth)
	s.Kit().Handle(s.cmon.mux, "GET /v1/gz/discover", s.cmonDiscoverCNs, simkit.NoAuth)
	s.cmon.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		simkit.Write(w, r, failCode(http.StatusNotFound, "ResourceNotFound", "%s does not exist", r.URL.Path))
	})
}

// cmonContainer is one machine of GET /v1/discover, as CMON's mapVm
// describes it (what Prometheus's triton_sd_configs decodes).
type cmonContainer struct {
	Groups      []string `json:"groups"`
	ServerUUID  string   `json:"server_uuid"`
	VMAlias     string   `json:"vm_alias"`
	VMBrand     string   `json:"vm_brand"`
	VMImageUUID string   `json:"vm_image_uuid"`
	VMOwnerUUID string   `json:"vm_owner_uuid"`
	VMUUID      string   `json:"vm_uuid"`
}

// cmonDiscover serves GET /v1/discover[?groups=a,b]: the account's running
// machines, those with any of the groups in their triton.cmon.groups tag
// when groups is given (400 BadRequest when it is not a valid groups
// value).
func (s *Server) cmonDiscover(r *http.Request) simkit.Response {
	if _, fail := s.cmonAuthenticate(r); fail != nil {
		return *fail
	}
	var want []string
	if q := r.URL.Query(); q.Has("groups") {
		if err := checkSpecialTag("triton.cmon.groups", "string", q.Get("groups")); err != nil {
			return failCode(http.StatusBadRequest, "BadRequest", "invalid \"groups\":%s", err.Error())
		}
		want = strings.Split(q.Get("groups"), ",")
	}
	out := []cmonContainer{}
	for _, m := range s.st.machines.All() {
		if m.State != StateRunning {
			continue
		}
		c := cmonContainer{Groups: machineCMONGroups(m), ServerUUID: m.ComputeNode, VMAlias: m.Name,
			VMBrand: m.Brand, VMImageUUID: m.Image, VMOwnerUUID: s.st.accountID, VMUUID: m.ID}
		if want == nil || anyIn(want, c.Groups) {
			out = append(out, c)
		}
	}
	return ok(map[string]any{"containers": out})
}

// cmonDiscoverCNs serves GET /v1/gz/discover, the compute nodes, for
// operators only: the simulated account is not one, so an authenticated
// request gets 403.
func (s *Server) cmonDiscoverCNs(r *http.Request) simkit.Response {
	login, fail := s.cmonAuthenticate(r)
	if fail != nil {
		return *fail
	}
	return failCode(http.StatusForbidden, "Forbidden", "%s is not an operator", login)
}

// machineCMONGroups is m's triton.cmon.groups tag split at commas; none
// when it is absent or empty.
func machineCMONGroups(m *Machine) []string {
	v, _ := m.Tags["triton.cmon.groups"].(string)
	if v == "" {
		return []string{}
	}
	return strings.Split(v, ",")
}

func anyIn(want, have []string) bool {
	for _, w := range want {
		for _, h := range have {
			if w == h {
				return true
			}
		}
	}
	return false
}
