package ranchersim

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // Cattle's certFingerprint is a SHA-1 fingerprint, not a security check
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Certificate is a Cattle certificate: a PEM certificate and its private
// key that a load balancer terminates TLS with (lbConfig.certificateIds,
// defaultCertificateId).
type Certificate struct {
	// ID is "1c<n>".
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Cert        string `json:"cert"`
	CertChain   string `json:"certChain,omitempty"`
	// Key is the private key: the API answers it to the create only (the
	// schema's readOnCreateOnly), and /_sim/state never shows it.
	Key string `json:"-"`
	// State is activating, active, removing or removed.
	State   string     `json:"state"`
	Created time.Time  `json:"created"`
	Removed *time.Time `json:"removed,omitempty"`
	// CertificateInfo is what Cattle reads from the certificate.
	CertificateInfo
}

// CertificateInfo is what Cattle reads from a certificate's PEM on
// create.
type CertificateInfo struct {
	CN                      string   `json:"CN"`
	SubjectAlternativeNames []string `json:"subjectAlternativeNames"`
	Issuer                  string   `json:"issuer"`
	IssuedAt                string   `json:"issuedAt"`
	ExpiresAt               string   `json:"expiresAt"`
	Algorithm               string   `json:"algorithm"`
	KeySize                 int      `json:"keySize"`
	SerialNumber            string   `json:"serialNumber"`
	Version                 string   `json:"version"`
	CertFingerprint         string   `json:"certFingerprint"`
}

func (c *Certificate) clone() Certificate {
	out := *c
	out.SubjectAlternativeNames = append([]string(nil), c.SubjectAlternativeNames...)
	out.Removed = clonePtr(c.Removed)
	return out
}

// certificateAPI serves the certs table.
var certificateAPI = resources[Certificate]{typ: "certificate", table: func(st *state) *simkit.Table[Certificate] { return st.certs },
	id: func(c *Certificate) string { return c.ID }, doc: func(v view, st *state, c *Certificate) any { return v.certificate(st, c) }}

func (s *Server) certificateRoutes() {
	s.handle("GET "+projectPath+"/certificates", certificateAPI.list(s))
	s.handle("POST "+projectPath+"/certificates", s.createCertificate)
	s.handle("GET "+projectPath+"/certificates/{id}", certificateAPI.get(s))
	s.handle("PUT "+projectPath+"/certificates/{id}", s.updateCertificate)
	s.handle("DELETE "+projectPath+"/certificates/{id}", s.removeCertificate)
	s.handle("POST "+projectPath+"/certificates/{id}", s.removeCertificate)
}

// certificateDoc is a certificate as the API answers it (go-rancher's
// Certificate, whose cN reads the schema's CN: encoding/json matches keys
// case-insensitively).
type certificateDoc struct {
	resource
	CertificateInfo
	Name                 string  `json:"name"`
	State                string  `json:"state"`
	Kind                 string  `json:"kind"`
	Cert                 string  `json:"cert"`
	Key                  *string `json:"key,omitempty"`
	Description          *string `json:"description"`
	CertChain            *string `json:"certChain"`
	UUID                 string  `json:"uuid"`
	AccountID            string  `json:"accountId"`
	Created              string  `json:"created"`
	CreatedTS            int64   `json:"createdTS"`
	Removed              *string `json:"removed"`
	Transitioning        string  `json:"transitioning"`
	TransitioningMessage *string `json:"transitioningMessage"`
}

func (v view) certificate(st *state, c *Certificate) certificateDoc {
	self := v.self("certificates", c.ID)
	return certificateDoc{
		resource: resource{ID: c.ID, Type: "certificate", BaseType: "certificate",
			Actions: actions(self, stackActions(c.State)...), Links: map[string]string{"self": self}},
		CertificateInfo: c.CertificateInfo, Name: c.Name, State: c.State, Kind: "certificate", Cert: c.Cert,
		Description: nullable(c.Description), CertChain: nullable(c.CertChain),
		UUID: uuidFor(c.ID), AccountID: st.opts.Project,
		Created: c.Created.Format(time.RFC3339), CreatedTS: c.Created.UnixMilli(),
		Removed: timestamp(c.Removed), Transitioning: transitioning(c.State),
		TransitioningMessage: transitioningMessage(c.State),
	}
}

// certificateInput is what a POST or PUT of a certificate may set.
type certificateInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Cert        *string `json:"cert"`
	CertChain   *string `json:"certChain"`
	Key         *string `json:"key"`
}

// createCertificate answers POST certificates: 201 with the certificate
// activating (and its key, this once); name, cert and key are required,
// the name unique among certificates not removed, and the PEM must parse.
func (s *Server) createCertificate(r *http.Request) simkit.Response {
	var in certificateInput
	if resp := decode(r, &in); resp != nil {
		return *resp
	}
	c := Certificate{Name: deref(in.Name), Description: deref(in.Description), Cert: deref(in.Cert),
		CertChain: deref(in.CertChain), Key: deref(in.Key), State: StateActivating}
	if p := s.st.checkCertificate(&c, ""); p != nil {
		return p.response()
	}
	added := s.st.addCertificate(c)
	s.st.life.Start(added.ID, func() { added.State = StateActive })
	doc := s.view(r).certificate(s.st, added)
	doc.Key = &added.Key
	return created(doc)
}

// updateCertificate answers PUT: name, description, cert, certChain and
// key, checked as a create checks them.
func (s *Server) updateCertificate(r *http.Request) simkit.Response {
	c, found := s.st.certs.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var in certificateInput
	if resp := decodeUpdate(r, mustSchema("certificate"), &in); resp != nil {
		return *resp
	}
	next := c.clone()
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&next.Name, in.Name)
	set(&next.Description, in.Description)
	set(&next.Cert, in.Cert)
	set(&next.CertChain, in.CertChain)
	set(&next.Key, in.Key)
	if p := s.st.checkCertificate(&next, c.ID); p != nil {
		return p.response()
	}
	*c = next
	return ok(s.view(r).certificate(s.st, c))
}

// removeCertificate answers DELETE and POST ?action= (remove or update):
// the certificate's removal. Load balancers that name it keep the ID
// (Cattle's behaviour here is not documented; the choice is plausible).
func (s *Server) removeCertificate(r *http.Request) simkit.Response {
	c, found := s.st.certs.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return removal(r, "certificate", c.State, c.Removed != nil, func() { s.st.retire(c.ID, &c.State, &c.Removed, nil) },
		func() any { return s.view(r).certificate(s.st, c) })
}

// checkCertificate vets c (a new certificate, or certificate except
// changed) and fills in what Cattle reads from its PEM.
func (st *state) checkCertificate(c *Certificate, except string) *problem {
	switch {
	case c.Name == "":
		return &problem{codeMissingRequired, "name"}
	case len(c.Name) > 255:
		return &problem{codeMaxLength, "name"}
	case st.liveCertificateNamed(c.Name, except) != nil:
		return &problem{codeNotUnique, "name"}
	case len(c.Description) > 1024:
		return &problem{codeMaxLength, "description"}
	}
	for _, f := range []struct{ name, value string }{{"cert", c.Cert}, {"key", c.Key}, {"certChain", c.CertChain}} {
		if f.value == "" && f.name != "certChain" {
			return &problem{codeMissingRequired, f.name}
		}
		if len(f.value) > 65535 {
			return &problem{codeMaxLength, f.name}
		}
	}
	field, err := parseCertificate(c)
	if err != nil {
		return &problem{codeInvalidFormat, field}
	}
	return nil
}

// parseCertificate reads c's certificate, chain and key as Cattle does on
// create: the certificate's details fill c's read-only fields; a PEM that
// does not parse, or a key that is not the certificate's, is an error
// about that field.
func parseCertificate(c *Certificate) (field string, err error) {
	block, _ := pem.Decode([]byte(c.Cert))
	if block == nil || block.Type != "CERTIFICATE" {
		return "cert", fmt.Errorf("cert: no PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "cert", fmt.Errorf("cert: %w", err)
	}
	for rest := []byte(c.CertChain); len(strings.TrimSpace(string(rest))) > 0; {
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return "certChain", fmt.Errorf("certChain: not PEM certificates")
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "certChain", fmt.Errorf("certChain: %w", err)
		}
	}
	if _, err := tls.X509KeyPair([]byte(c.Cert), []byte(c.Key)); err != nil {
		return "key", fmt.Errorf("key: %w", err)
	}
	c.CertificateInfo = certificateInfo(cert)
	return "", nil
}

// certificateInfo is what Cattle shows of a certificate. Cattle's exact
// formats (dates, serial, fingerprint) are not documented: RFC 3339 UTC
// dates, a decimal serial and a colon-separated SHA-1 fingerprint are the
// simulator's plausible choices.
func certificateInfo(cert *x509.Certificate) CertificateInfo {
	var c CertificateInfo
	c.CN = cert.Subject.CommonName
	c.SubjectAlternativeNames = append([]string(nil), cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		c.SubjectAlternativeNames = append(c.SubjectAlternativeNames, ip.String())
	}
	c.Issuer = cert.Issuer.CommonName
	c.IssuedAt = cert.NotBefore.UTC().Format(time.RFC3339)
	c.ExpiresAt = cert.NotAfter.UTC().Format(time.RFC3339)
	c.Algorithm = cert.SignatureAlgorithm.String()
	c.KeySize = keySize(cert.PublicKey)
	c.SerialNumber = cert.SerialNumber.String()
	c.Version = strconv.Itoa(cert.Version)
	sum := sha1.Sum(cert.Raw) //nolint:gosec // a fingerprint, as Cattle shows it
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02X", b)
	}
	c.CertFingerprint = strings.Join(hexes, ":")
	return c
}

// keySize is the size of a public key in bits.
func keySize(pub any) int {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		return k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return 256
	}
	return 0
}

// liveCertificate returns the certificate with the ID unless it is
// removed (or being removed): what a load balancer may refer to.
func (st *state) liveCertificate(id string) *Certificate {
	c, found := st.certs.Get(id)
	if !found || c.Removed != nil || c.State == StateRemoving {
		return nil
	}
	return c
}

// liveCertificateNamed returns the certificate called name that is not
// removed, other than except.
func (st *state) liveCertificateNamed(name, except string) *Certificate {
	c, _ := st.certs.Find(func(c *Certificate) bool { return c.Name == name && c.Removed == nil && c.ID != except })
	return c
}

// AddCertificate adds a certificate in its State (default active), as if
// uploaded earlier: ID "1c<n>" unless given, Created now, its details
// read from Cert. It panics on a taken ID, a name in use or a PEM Cattle
// would refuse, as a test's mistake.
func (s *Server) AddCertificate(c Certificate) Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.State == "" {
		c.State = StateActive
	}
	if p := s.st.checkCertificate(&c, ""); p != nil {
		panic(fmt.Sprintf("ranchersim: certificate %q: %s %s", c.Name, p.field, p.code))
	}
	return s.st.addCertificate(c).clone()
}

func (st *state) addCertificate(c Certificate) *Certificate {
	st.admit(prefixCertificate, &c.ID, &c.Created)
	out := c.clone()
	st.certs.Put(out.ID, &out)
	return &out
}

// Certificate returns a copy of the certificate with the ID, its key
// too.
func (s *Server) Certificate(id string) (Certificate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.certs, id, (*Certificate).clone)
}

// Certificates returns copies of the certificates, oldest first, removed
// ones too.
func (s *Server) Certificates() []Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.certs.All(), (*Certificate).clone)
}
