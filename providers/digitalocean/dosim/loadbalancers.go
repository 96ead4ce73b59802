package dosim

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Load balancer statuses.
const (
	LBStatusNew     = "new"
	LBStatusActive  = "active"
	LBStatusErrored = "errored"
)

// LoadBalancer is a load balancer as the API serves it (godo.LoadBalancer's
// JSON; the size slug is "size").
type LoadBalancer struct {
	ID                           string           `json:"id"`
	Name                         string           `json:"name"`
	IP                           string           `json:"ip"`
	IPv6                         string           `json:"ipv6,omitempty"`
	SizeSlug                     string           `json:"size,omitempty"`
	SizeUnit                     uint32           `json:"size_unit,omitempty"`
	Type                         string           `json:"type"`
	Algorithm                    string           `json:"algorithm"`
	Status                       string           `json:"status"`
	Created                      string           `json:"created_at"`
	ForwardingRules              []ForwardingRule `json:"forwarding_rules"`
	HealthCheck                  *HealthCheck     `json:"health_check"`
	StickySessions               *StickySessions  `json:"sticky_sessions"`
	Region                       *Region          `json:"region"`
	DropletIDs                   []int            `json:"droplet_ids"`
	Tag                          string           `json:"tag"`
	Tags                         []string         `json:"tags"`
	RedirectHttpToHttps          bool             `json:"redirect_http_to_https"`
	EnableProxyProtocol          bool             `json:"enable_proxy_protocol"`
	EnableBackendKeepalive       bool             `json:"enable_backend_keepalive"`
	HTTPIdleTimeoutSeconds       *uint64          `json:"http_idle_timeout_seconds,omitempty"`
	VPCUUID                      string           `json:"vpc_uuid"`
	VPCSubnetUUID                string           `json:"subnet_uuid,omitempty"`
	ProjectID                    string           `json:"project_id,omitempty"`
	DisableLetsEncryptDNSRecords *bool            `json:"disable_lets_encrypt_dns_records,omitempty"`
	Firewall                     *LBFirewall      `json:"firewall,omitempty"`
	Network                      string           `json:"network,omitempty"`
	NetworkStack                 string           `json:"network_stack,omitempty"`
	TLSCipherPolicy              string           `json:"tls_cipher_policy,omitempty"`
}

// ForwardingRule maps an entry port to a target port.
type ForwardingRule struct {
	EntryProtocol  string `json:"entry_protocol"`
	EntryPort      int    `json:"entry_port"`
	TargetProtocol string `json:"target_protocol"`
	TargetPort     int    `json:"target_port"`
	CertificateID  string `json:"certificate_id"`
	TlsPassthrough bool   `json:"tls_passthrough"`
}

// HealthCheck is a load balancer's health check.
type HealthCheck struct {
	Protocol               string `json:"protocol"`
	Port                   int    `json:"port"`
	Path                   string `json:"path"`
	CheckIntervalSeconds   int    `json:"check_interval_seconds"`
	ResponseTimeoutSeconds int    `json:"response_timeout_seconds"`
	HealthyThreshold       int    `json:"healthy_threshold"`
	UnhealthyThreshold     int    `json:"unhealthy_threshold"`
	ProxyProtocol          *bool  `json:"proxy_protocol,omitempty"`
}

// StickySessions is a load balancer's session affinity.
type StickySessions struct {
	Type             string `json:"type"`
	CookieName       string `json:"cookie_name,omitempty"`
	CookieTtlSeconds int    `json:"cookie_ttl_seconds,omitempty"`
}

// LBFirewall holds a load balancer's allow and deny rules ("ip:1.2.3.4",
// "cidr:10.0.0.0/8").
type LBFirewall struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// lbRequest is the body of POST and PUT /v2/load_balancers (godo's
// LoadBalancerRequest).
type lbRequest struct {
	Name                         string           `json:"name"`
	Algorithm                    string           `json:"algorithm"`
	Region                       string           `json:"region"`
	SizeSlug                     string           `json:"size"`
	SizeUnit                     uint32           `json:"size_unit"`
	Type                         string           `json:"type"`
	ForwardingRules              []ForwardingRule `json:"forwarding_rules"`
	HealthCheck                  *HealthCheck     `json:"health_check"`
	StickySessions               *StickySessions  `json:"sticky_sessions"`
	DropletIDs                   []int            `json:"droplet_ids"`
	Tag                          string           `json:"tag"`
	Tags                         []string         `json:"tags"`
	RedirectHttpToHttps          bool             `json:"redirect_http_to_https"`
	EnableProxyProtocol          bool             `json:"enable_proxy_protocol"`
	EnableBackendKeepalive       bool             `json:"enable_backend_keepalive"`
	VPCUUID                      string           `json:"vpc_uuid"`
	VPCSubnetUUID                string           `json:"subnet_uuid"`
	ProjectID                    string           `json:"project_id"`
	DisableLetsEncryptDNSRecords *bool            `json:"disable_lets_encrypt_dns_records"`
	HTTPIdleTimeoutSeconds       *uint64          `json:"http_idle_timeout_seconds"`
	Firewall                     *LBFirewall      `json:"firewall"`
	Network                      string           `json:"network"`
	NetworkStack                 string           `json:"network_stack"`
	TLSCipherPolicy              string           `json:"tls_cipher_policy"`
	ValidateOnly                 bool             `json:"validate_only"`
	// IP is a reserved (BYOIP) address for a new load balancer; create only.
	IP string `json:"ip"`
}

type lbRecord struct {
	lb  LoadBalancer
	seq int
}

func (lb *LoadBalancer) clone() LoadBalancer {
	c := *lb
	c.ForwardingRules = slices.Clone(lb.ForwardingRules)
	c.DropletIDs = slices.Clone(lb.DropletIDs)
	c.Tags = slices.Clone(lb.Tags)
	if lb.HealthCheck != nil {
		hc := *lb.HealthCheck
		c.HealthCheck = &hc
	}
	if lb.StickySessions != nil {
		ss := *lb.StickySessions
		c.StickySessions = &ss
	}
	if lb.Region != nil {
		r := *lb.Region
		c.Region = &r
	}
	if lb.Firewall != nil {
		c.Firewall = &LBFirewall{Allow: slices.Clone(lb.Firewall.Allow), Deny: slices.Clone(lb.Firewall.Deny)}
	}
	return c
}

// view is the load balancer as the API answers it: one that targets
// droplets by tag lists the droplets carrying the tag now in droplet_ids
// (openapi specification/resources/load_balancers/responses/examples.yml,
// "tag: prod:web" with its droplet_ids).
func (st *state) view(rec *lbRecord) LoadBalancer {
	lb := rec.lb.clone()
	if lb.Tag != "" {
		lb.DropletIDs = []int{}
		for _, id := range st.dropletOrder {
			if slices.Contains(st.droplets[id].Tags, lb.Tag) {
				lb.DropletIDs = append(lb.DropletIDs, id)
			}
		}
	}
	return lb
}

// apply replaces the record's spec by req (full replace), keeping ID,
// status, addresses and creation time.
func (rec *lbRecord) apply(req *lbRequest) {
	old := rec.lb
	lb := LoadBalancer{
		ID: old.ID, IP: old.IP, IPv6: old.IPv6, Status: old.Status, Created: old.Created,
		Name: req.Name, SizeSlug: req.SizeSlug, SizeUnit: req.SizeUnit, Type: req.Type, Algorithm: req.Algorithm,
		ForwardingRules: slices.Clone(req.ForwardingRules), HealthCheck: req.HealthCheck, StickySessions: req.StickySessions,
		DropletIDs: slices.Clone(req.DropletIDs), Tag: req.Tag, Tags: slices.Clone(req.Tags),
		RedirectHttpToHttps: req.RedirectHttpToHttps, EnableProxyProtocol: req.EnableProxyProtocol,
		EnableBackendKeepalive: req.EnableBackendKeepalive, HTTPIdleTimeoutSeconds: req.HTTPIdleTimeoutSeconds,
		VPCUUID: req.VPCUUID, VPCSubnetUUID: req.VPCSubnetUUID, ProjectID: req.ProjectID, DisableLetsEncryptDNSRecords: req.DisableLetsEncryptDNSRecords,
		Firewall: req.Firewall, Network: req.Network, NetworkStack: req.NetworkStack, TLSCipherPolicy: req.TLSCipherPolicy,
	}
	reg := region(req.Region)
	lb.Region = &reg
	if lb.Algorithm == "" {
		lb.Algorithm = "round_robin"
	}
	if lb.Type == "" {
		lb.Type = "REGIONAL"
	}
	if lb.Network == "" {
		lb.Network = "EXTERNAL"
	}
	if lb.NetworkStack == "" {
		lb.NetworkStack = "IPV4"
	}
	if lb.SizeSlug == "" && lb.SizeUnit == 0 {
		lb.SizeUnit = 1
	}
	if lb.HealthCheck == nil {
		lb.HealthCheck = &HealthCheck{}
	}
	defaultHealthCheck(lb.HealthCheck, lb.ForwardingRules)
	if lb.StickySessions == nil || lb.StickySessions.Type == "" {
		lb.StickySessions = &StickySessions{Type: "none"}
	}
	if lb.HTTPIdleTimeoutSeconds == nil {
		v := uint64(60)
		lb.HTTPIdleTimeoutSeconds = &v
	}
	if lb.DisableLetsEncryptDNSRecords == nil {
		f := false
		lb.DisableLetsEncryptDNSRecords = &f
	}
	if lb.DropletIDs == nil {
		lb.DropletIDs = []int{}
	}
	if lb.Tags == nil {
		lb.Tags = []string{}
	}
	if lb.VPCUUID == "" {
		lb.VPCUUID = uuid(1, 1)
	}
	rec.lb = lb
	rec.addresses()
}

// defaultHealthCheck fills in what the API defaults.
func defaultHealthCheck(hc *HealthCheck, rules []ForwardingRule) {
	if hc.Protocol == "" {
		hc.Protocol = "http"
	}
	if hc.Port == 0 {
		hc.Port = 80
		for _, r := range rules {
			if r.TargetProtocol != "udp" {
				hc.Port = r.TargetPort
				break
			}
		}
	}
	if hc.Path == "" && hc.Protocol != "tcp" {
		hc.Path = "/"
	}
	if hc.CheckIntervalSeconds == 0 {
		hc.CheckIntervalSeconds = 10
	}
	if hc.ResponseTimeoutSeconds == 0 {
		hc.ResponseTimeoutSeconds = 5
	}
	if hc.HealthyThreshold == 0 {
		hc.HealthyThreshold = 5
	}
	if hc.UnhealthyThreshold == 0 {
		hc.UnhealthyThreshold = 3
	}
}

// addresses gives an active load balancer its IPs: an IPv4 always and an
// IPv6 with network_stack DUALSTACK; internal ones get a VPC address.
func (rec *lbRecord) addresses() {
	lb := &rec.lb
	if lb.Status != LBStatusActive {
		return
	}
	n := rec.seq
	if lb.IP == "" {
		if lb.Network == "INTERNAL" {
			lb.IP = fmt.Sprintf("10.%d.%d.%d", 100+n/65536%100, n/256%256, n%256)
		} else {
			lb.IP = fmt.Sprintf("%d.%d.%d.%d", 45+n/65536%10, 55+n/256%100, n/256%256, n%256)
		}
	}
	if lb.NetworkStack == "DUALSTACK" && lb.IPv6 == "" {
		lb.IPv6 = fmt.Sprintf("2604:a880:400:d1::%x:%x", n/65536, n%65536)
	}
	if lb.NetworkStack != "DUALSTACK" {
		lb.IPv6 = ""
	}
}

// provision makes rec "new": it becomes active (with its IPs) on its
// ProvisioningReads-th read (a GET of it, or a list page holding it), or
// on Advance. The caller holds s.mu.
func (s *Server) provision(rec *lbRecord) {
	rec.lb.Status = LBStatusNew
	s.st.provisioning.Start(rec.lb.ID, func() {
		rec.lb.Status = LBStatusActive
		rec.addresses()
	})
}

func (s *Server) createLoadBalancer(r *http.Request) (int, any) {
	var req lbRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if msg := s.validateLB(&req); msg != "" {
		return unprocessable("%s", msg)
	}
	if req.ValidateOnly {
		return http.StatusOK, map[string]any{"load_balancer": map[string]any{}}
	}
	st := s.st
	st.lbSeq++
	rec := &lbRecord{seq: st.lbSeq}
	rec.lb.ID = uuid(2, st.lbSeq)
	rec.lb.Created = created
	rec.lb.IP = req.IP
	rec.apply(&req)
	st.addTags(rec.lb.Tags)
	st.lbs[rec.lb.ID] = rec
	st.lbOrder = append(st.lbOrder, rec.lb.ID)
	s.provision(rec)
	return http.StatusAccepted, map[string]any{"load_balancer": s.st.view(rec)}
}

func (s *Server) getLoadBalancer(r *http.Request) (int, any) {
	rec, ok := s.st.lbs[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	s.st.provisioning.Read(rec.lb.ID)
	return http.StatusOK, map[string]any{"load_balancer": s.st.view(rec)}
}

// listLoadBalancers serves GET /v2/load_balancers with page, per_page and
// godo's ListByNames (names=) and ListByUUIDs (uuids=) filters.
func (s *Server) listLoadBalancers(r *http.Request) (int, any) {
	q := r.URL.Query()
	names, uuids := q["names"], q["uuids"]
	var recs []*lbRecord
	for _, id := range s.st.lbOrder {
		rec := s.st.lbs[id]
		if len(names) > 0 && !slices.Contains(names, rec.lb.Name) {
			continue
		}
		if len(uuids) > 0 && !slices.Contains(uuids, rec.lb.ID) {
			continue
		}
		recs = append(recs, rec)
	}
	p, err := paginate(r, recs, s.opts.PerPage)
	if err != nil {
		return fail(http.StatusBadRequest, "%s", err.Error())
	}
	out := page[LoadBalancer]{items: make([]LoadBalancer, 0, len(p.items)), links: p.links, meta: p.meta}
	for _, rec := range p.items {
		s.st.provisioning.Read(rec.lb.ID)
		out.items = append(out.items, s.st.view(rec))
	}
	return http.StatusOK, listBody("load_balancers", out)
}

func (s *Server) updateLoadBalancer(r *http.Request) (int, any) {
	rec, ok := s.st.lbs[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	var req lbRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if msg := s.validateLB(&req); msg != "" {
		return unprocessable("%s", msg)
	}
	if req.Region != rec.lb.Region.Slug {
		return unprocessable("region cannot be changed")
	}
	rec.apply(&req)
	s.st.addTags(rec.lb.Tags)
	return http.StatusOK, map[string]any{"load_balancer": s.st.view(rec)}
}

func (s *Server) deleteLoadBalancer(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.lbs[id]; !ok {
		return notFound()
	}
	delete(s.st.lbs, id)
	s.st.lbOrder = slices.DeleteFunc(s.st.lbOrder, func(x string) bool { return x == id })
	s.st.provisioning.Stop(id)
	return http.StatusNoContent, nil
}

// LoadBalancers returns the load balancers, oldest first, without counting
// as reads.
func (s *Server) LoadBalancers() []LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.lbList()
}

func (st *state) lbList() []LoadBalancer {
	out := make([]LoadBalancer, 0, len(st.lbOrder))
	for _, id := range st.lbOrder {
		out = append(out, st.view(st.lbs[id]))
	}
	return out
}

// Advance settles all asynchronous work now: every "new" load balancer
// becomes active, every firewall's pending changes are applied and every
// droplet action completes.
func (s *Server) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.provisioning.Advance()
	s.st.applying.Advance()
	s.st.acting.Advance()
}

// SetLoadBalancerStatus sets a load balancer's status (e.g.
// LBStatusErrored) and reports whether it exists. Active gives it its IPs.
func (s *Server) SetLoadBalancerStatus(id, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.st.lbs[id]
	if ok {
		rec.lb.Status = status
		rec.addresses()
		s.st.provisioning.Stop(id)
		if status == LBStatusNew {
			s.provision(rec)
		}
	}
	return ok
}

// AddLoadBalancer stores lb as if created earlier (e.g. by another CCM)
// and returns it as stored: zero ID, status, type, region and health check
// get defaults, and an active one gets its IPs. It is not validated.
func (s *Server) AddLoadBalancer(lb LoadBalancer) LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.lbSeq++
	rec := &lbRecord{seq: st.lbSeq}
	req := lbRequest{
		Name: lb.Name, Algorithm: lb.Algorithm, Region: s.opts.Region, SizeSlug: lb.SizeSlug, SizeUnit: lb.SizeUnit,
		Type: lb.Type, ForwardingRules: lb.ForwardingRules, HealthCheck: lb.HealthCheck, StickySessions: lb.StickySessions,
		DropletIDs: lb.DropletIDs, Tag: lb.Tag, Tags: lb.Tags, RedirectHttpToHttps: lb.RedirectHttpToHttps,
		EnableProxyProtocol: lb.EnableProxyProtocol, EnableBackendKeepalive: lb.EnableBackendKeepalive,
		VPCUUID: lb.VPCUUID, ProjectID: lb.ProjectID, DisableLetsEncryptDNSRecords: lb.DisableLetsEncryptDNSRecords,
		HTTPIdleTimeoutSeconds: lb.HTTPIdleTimeoutSeconds, Firewall: lb.Firewall, Network: lb.Network,
		NetworkStack: lb.NetworkStack, TLSCipherPolicy: lb.TLSCipherPolicy,
	}
	if lb.Region != nil && lb.Region.Slug != "" {
		req.Region = lb.Region.Slug
	}
	rec.lb = LoadBalancer{ID: lb.ID, Status: lb.Status, IP: lb.IP, IPv6: lb.IPv6, Created: lb.Created}
	if rec.lb.ID == "" {
		rec.lb.ID = uuid(2, st.lbSeq)
	}
	if rec.lb.Status == "" {
		rec.lb.Status = LBStatusActive
	}
	if rec.lb.Created == "" {
		rec.lb.Created = created
	}
	rec.apply(&req)
	st.addTags(rec.lb.Tags)
	if _, ok := st.lbs[rec.lb.ID]; !ok {
		st.lbOrder = append(st.lbOrder, rec.lb.ID)
	}
	st.lbs[rec.lb.ID] = rec
	st.provisioning.Stop(rec.lb.ID)
	if rec.lb.Status == LBStatusNew {
		s.provision(rec)
	}
	return s.st.view(rec)
}
