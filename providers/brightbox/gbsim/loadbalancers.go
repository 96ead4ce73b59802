package gbsim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// LoadBalancer is a load balancer as the simulator holds it. AddLoadBalancer
// seeds one; the API renders it with its nodes and cloud IPs.
type LoadBalancer struct {
	// ID is "lba-xxxxx"; "" gets a new one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is one of LoadBalancerStatuses; "" means active. Seeded
	// creating or deleting, it settles as one created or deleted does.
	Status string `json:"status"`
	// Policy is one of BalancingPolicies; "" means least-connections.
	Policy      string      `json:"policy"`
	Listeners   []Listener  `json:"listeners"`
	Healthcheck Healthcheck `json:"healthcheck"`
	// Nodes are the server IDs behind the load balancer.
	Nodes []string `json:"nodes"`
	// Domains are the ACME (Let's Encrypt) domains and their state.
	Domains []ACMEDomain `json:"domains,omitempty"`
	// ACMECertificate is the certificate issued for Domains once they
	// are all valid.
	ACMECertificate *Certificate `json:"acme_certificate,omitempty"`
	// Certificate is the uploaded certificate (certificate_pem).
	Certificate       *Certificate `json:"certificate,omitempty"`
	HTTPSRedirect     bool         `json:"https_redirect"`
	SSLMinimumVersion string       `json:"ssl_minimum_version"`
	// BufferSize is 4096 when 0.
	BufferSize int        `json:"buffer_size"`
	Locked     bool       `json:"locked"`
	CreatedAt  time.Time  `json:"created_at"`
	DeletedAt  *time.Time `json:"deleted_at,omitempty"`
}

// Listener is a load balancer's listener: traffic on port In goes to port
// Out of the nodes.
type Listener struct {
	// Protocol is one of ListenerProtocols.
	Protocol string `json:"protocol"`
	In       int    `json:"in"`
	Out      int    `json:"out"`
	// Timeout is the idle timeout in milliseconds.
	Timeout int `json:"timeout"`
	// ProxyProtocol is "" (off) or one of ProxyProtocols.
	ProxyProtocol string `json:"proxy_protocol,omitempty"`
}

// Healthcheck is a load balancer's health check of its nodes.
type Healthcheck struct {
	// Type is one of HealthcheckTypes.
	Type string `json:"type"`
	Port int    `json:"port"`
	// Request is the HTTP path of an http check.
	Request       string `json:"request,omitempty"`
	Interval      int    `json:"interval"`
	Timeout       int    `json:"timeout"`
	ThresholdUp   int    `json:"threshold_up"`
	ThresholdDown int    `json:"threshold_down"`
}

// ACMEDomain is a domain a load balancer gets a Let's Encrypt certificate
// for; Status is pending until it validates (ACMEPending, ACMEValid,
// ACMEInvalid).
type ACMEDomain struct {
	Identifier  string `json:"identifier"`
	Status      string `json:"status"`
	LastMessage string `json:"last_message"`
}

// Certificate is a load balancer's certificate, as the API shows it.
type Certificate struct {
	Fingerprint string    `json:"fingerprint"`
	ExpiresAt   time.Time `json:"expires_at"`
	IssuedAt    time.Time `json:"issued_at"`
}

func (lb *LoadBalancer) clone() LoadBalancer {
	c := *lb
	c.Listeners = slices.Clone(lb.Listeners)
	c.Nodes = slices.Clone(lb.Nodes)
	c.Domains = slices.Clone(lb.Domains)
	return c
}

// AddLoadBalancer creates a load balancer from lb as if made earlier (by
// the existing CCM, say) and returns it as stored: zero fields get the
// defaults their doc comments give, a creating one settles as a created
// one does. It panics on values the API would refuse: a test's mistake.
func (s *Server) AddLoadBalancer(lb LoadBalancer) LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if lb.ID == "" {
		lb.ID = st.newID("lba")
	}
	if lb.Status == "" {
		lb.Status = StatusActive
	}
	if lb.CreatedAt.IsZero() {
		lb.CreatedAt = epoch
	}
	applyLBDefaults(&lb)
	mustEnum("status", lb.Status, LoadBalancerStatuses)
	if err := validateLB(st, &lb); err != nil {
		panic("gbsim: " + err.Error())
	}
	stored := lb.clone()
	st.lbs.Put(lb.ID, &stored)
	st.retiring.Stop(lb.ID)
	switch lb.Status {
	case StatusCreating:
		st.settling.Start(lb.ID, func() { stored.Status = StatusActive })
	case StatusDeleting:
		st.startDeletion(&stored)
	case StatusDeleted:
		st.retire(lb.ID, func() { st.lbs.Del(lb.ID) })
	}
	st.startACME(&stored)
	return stored.clone()
}

// applyLBDefaults fills in what the API defaults.
func applyLBDefaults(lb *LoadBalancer) {
	if lb.Policy == "" {
		lb.Policy = "least-connections"
	}
	if lb.BufferSize == 0 {
		lb.BufferSize = 4096
	}
	if lb.SSLMinimumVersion == "" {
		lb.SSLMinimumVersion = "TLSv1.2"
	}
	for i := range lb.Listeners {
		if lb.Listeners[i].Timeout == 0 {
			lb.Listeners[i].Timeout = 50000
		}
	}
	hc := &lb.Healthcheck
	if hc.Type == "http" && hc.Request == "" {
		hc.Request = "/"
	}
	for _, p := range []*int{&hc.Interval, &hc.Timeout} {
		if *p == 0 {
			*p = 5000
		}
	}
	for _, p := range []*int{&hc.ThresholdUp, &hc.ThresholdDown} {
		if *p == 0 {
			*p = 3
		}
	}
}

// LoadBalancers returns the load balancers, oldest first, deleted ones
// still listed included.
func (s *Server) LoadBalancers() []LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.lbs.All(), (*LoadBalancer).clone)
}

// SetLoadBalancerStatus sets a load balancer's status (one of
// LoadBalancerStatuses), stopping any pending change, and reports whether
// it exists.
func (s *Server) SetLoadBalancerStatus(id, status string) bool {
	mustEnum("status", status, LoadBalancerStatuses)
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, found := s.st.lbs.Get(id)
	if found {
		s.st.settling.Stop(id)
		lb.Status = status
	}
	return found
}

// SetACMEDomainStatus sets the status and last_message of a load
// balancer's ACME domain, stopping its validation, and reports whether the
// domain exists.
func (s *Server) SetACMEDomainStatus(lbID, domain, status, message string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, found := s.st.lbs.Get(lbID)
	if !found {
		return false
	}
	for i := range lb.Domains {
		if lb.Domains[i].Identifier == domain {
			s.st.settling.Stop(acmeKey(lbID))
			lb.Domains[i].Status, lb.Domains[i].LastMessage = status, message
			return true
		}
	}
	return false
}

func acmeKey(lbID string) string { return "acme:" + lbID }

// startACME validates lb's pending ACME domains after the provisioning
// reads (or Options.SettleAfter), counted from when a cloud IP is mapped
// to it: Let's Encrypt reaches the load balancer through one, so without
// one they stay pending (mappedOnto starts them later). Once all are
// valid the certificate is issued.
func (st *state) startACME(lb *LoadBalancer) {
	if !slices.ContainsFunc(lb.Domains, func(d ACMEDomain) bool { return d.Status == ACMEPending }) || !st.hasCloudIP(lb.ID) {
		st.settling.Stop(acmeKey(lb.ID))
		return
	}
	st.settling.Start(acmeKey(lb.ID), func() {
		var ids []string
		for i := range lb.Domains {
			if lb.Domains[i].Status == ACMEPending {
				lb.Domains[i].Status, lb.Domains[i].LastMessage = ACMEValid, ""
			}
			ids = append(ids, lb.Domains[i].Identifier)
		}
		now := st.now()
		lb.ACMECertificate = &Certificate{Fingerprint: fingerprint(ids...), IssuedAt: now, ExpiresAt: now.Add(90 * 24 * time.Hour)}
	})
}

// hasCloudIP reports whether a cloud IP is mapped to load balancer id.
func (st *state) hasCloudIP(id string) bool {
	for _, c := range st.cips.All() {
		if c.Target == id {
			return true
		}
	}
	return false
}

// mappedOnto is what follows a cloud IP's mapping to target: a load
// balancer's ACME domains start validating, unless they already are.
func (st *state) mappedOnto(target string) {
	lb, ok := st.lbs.Get(target)
	if ok && !gone(lb.Status) && !st.settling.Pending(acmeKey(lb.ID)) {
		st.startACME(lb)
	}
}

func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// readLB counts a read of lb: it may settle, cloud IPs being mapped onto
// it may show and, once one has, its ACME domains may validate (Let's
// Encrypt reaches the load balancer through its cloud IP).
func (st *state) readLB(id string) {
	st.settling.Read(id)
	mapped := false
	for _, c := range st.cips.All() {
		if c.pending == id {
			st.mapping.Read(c.ID)
		}
		mapped = mapped || c.Target == id
	}
	if mapped {
		st.settling.Read(acmeKey(id))
	}
}

func (s *Server) listLoadBalancers(r *http.Request) simkit.Response {
	v := s.view(r)
	out := []lbJSON{}
	for _, lb := range s.st.lbs.All() {
		if !s.st.listed(lb.ID) {
			continue
		}
		s.st.readLB(lb.ID)
		out = append(out, v.lb(lb))
	}
	return ok(out)
}

func (s *Server) getLoadBalancer(r *http.Request) simkit.Response {
	lb, found := s.st.lbs.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	s.st.readLB(lb.ID)
	return ok(s.view(r).lb(lb))
}

func (s *Server) createLoadBalancer(r *http.Request) simkit.Response {
	var req lbRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if _, n := s.st.used(); n >= s.opts.LoadBalancersLimit {
		return limitReached("load balancers", s.opts.LoadBalancersLimit)
	}
	lb := LoadBalancer{Status: StatusCreating, CreatedAt: s.st.now()}
	if err := req.apply(&lb); err != nil {
		return invalid("%s", err.Error())
	}
	applyLBDefaults(&lb)
	if err := validateLB(s.st, &lb); err != nil {
		return invalid("%s", err.Error())
	}
	lb.ID = s.st.newID("lba")
	s.st.lbs.Put(lb.ID, &lb)
	s.st.settling.Start(lb.ID, func() { lb.Status = StatusActive })
	s.st.startACME(&lb)
	return accepted(s.view(r).lb(&lb))
}

func (s *Server) updateLoadBalancer(r *http.Request) simkit.Response {
	lb, found := s.st.lbs.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if gone(lb.Status) {
		return conflict("Load balancer %s is %s", lb.ID, lb.Status)
	}
	var req lbRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	next := lb.clone()
	if err := req.apply(&next); err != nil {
		return invalid("%s", err.Error())
	}
	applyLBDefaults(&next)
	if err := validateLB(s.st, &next); err != nil {
		return invalid("%s", err.Error())
	}
	*lb = next
	if req.Domains != nil {
		s.st.startACME(lb)
	}
	return accepted(s.view(r).lb(lb))
}

// gone reports whether a load balancer's status means it is being or has
// been deleted.
func gone(status string) bool { return status == StatusDeleting || status == StatusDeleted }

func (s *Server) deleteLoadBalancer(r *http.Request) simkit.Response {
	lb, found := s.st.lbs.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	switch {
	case gone(lb.Status):
		return conflict("Load balancer %s is %s", lb.ID, lb.Status)
	case lb.Locked:
		return conflict("Load balancer %s is locked", lb.ID)
	}
	lb.Status = StatusDeleting
	s.st.startDeletion(lb)
	return accepted(s.view(r).lb(lb))
}

// startDeletion settles a deleting load balancer: deleted, its cloud IPs
// unmapped, listed for a while yet.
func (st *state) startDeletion(lb *LoadBalancer) {
	st.settling.Stop(acmeKey(lb.ID))
	st.settling.Start(lb.ID, func() {
		now := st.now()
		lb.Status, lb.DeletedAt = StatusDeleted, &now
		for _, c := range st.cips.All() {
			if c.Target == lb.ID || c.pending == lb.ID {
				st.unmap(c)
			}
		}
		st.retire(lb.ID, func() { st.lbs.Del(lb.ID) })
	})
}
