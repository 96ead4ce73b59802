package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Octavia request bodies. Pointers tell "unset" from zero.
type (
	lbCreate struct {
		Name             string           `json:"name"`
		Description      string           `json:"description"`
		VipSubnetID      string           `json:"vip_subnet_id"`
		VipNetworkID     string           `json:"vip_network_id"`
		VipPortID        string           `json:"vip_port_id"`
		VipAddress       string           `json:"vip_address"`
		Provider         string           `json:"provider"`
		FlavorID         string           `json:"flavor_id"`
		AvailabilityZone string           `json:"availability_zone"`
		AdminStateUp     *bool            `json:"admin_state_up"`
		Tags             []string         `json:"tags"`
		Listeners        []listenerCreate `json:"listeners"`
		Pools            []poolCreate     `json:"pools"`
	}
	listenerCreate struct {
		LoadBalancerID         string            `json:"loadbalancer_id"`
		Name                   string            `json:"name"`
		Description            string            `json:"description"`
		Protocol               string            `json:"protocol"`
		ProtocolPort           int               `json:"protocol_port"`
		DefaultPoolID          string            `json:"default_pool_id"`
		DefaultPool            *poolCreate       `json:"default_pool"`
		ConnectionLimit        *int              `json:"connection_limit"`
		AdminStateUp           *bool             `json:"admin_state_up"`
		DefaultTLSContainerRef string            `json:"default_tls_container_ref"`
		SNIContainerRefs       []string          `json:"sni_container_refs"`
		TimeoutClientData      *int              `json:"timeout_client_data"`
		TimeoutMemberConnect   *int              `json:"timeout_member_connect"`
		TimeoutMemberData      *int              `json:"timeout_member_data"`
		TimeoutTCPInspect      *int              `json:"timeout_tcp_inspect"`
		InsertHeaders          map[string]string `json:"insert_headers"`
		AllowedCIDRs           []string          `json:"allowed_cidrs"`
		Tags                   []string          `json:"tags"`
	}
	poolCreate struct {
		LoadBalancerID     string              `json:"loadbalancer_id"`
		ListenerID         string              `json:"listener_id"`
		Name               string              `json:"name"`
		Description        string              `json:"description"`
		Protocol           string              `json:"protocol"`
		LBAlgorithm        string              `json:"lb_algorithm"`
		SessionPersistence *SessionPersistence `json:"session_persistence"`
		AdminStateUp       *bool               `json:"admin_state_up"`
		Tags               []string            `json:"tags"`
		Members            []memberCreate      `json:"members"`
		HealthMonitor      *monitorCreate      `json:"healthmonitor"`
	}
	memberCreate struct {
		Name           string   `json:"name"`
		Address        string   `json:"address"`
		ProtocolPort   int      `json:"protocol_port"`
		SubnetID       string   `json:"subnet_id"`
		Weight         *int     `json:"weight"`
		Backup         bool     `json:"backup"`
		AdminStateUp   *bool    `json:"admin_state_up"`
		MonitorAddress string   `json:"monitor_address"`
		MonitorPort    *int     `json:"monitor_port"`
		Tags           []string `json:"tags"`
	}
	monitorCreate struct {
		PoolID         string    `json:"pool_id"`
		Name           string    `json:"name"`
		Type           string    `json:"type"`
		Delay          int       `json:"delay"`
		Timeout        int       `json:"timeout"`
		MaxRetries     int       `json:"max_retries"`
		MaxRetriesDown *int      `json:"max_retries_down"`
		HTTPMethod     string    `json:"http_method"`
		URLPath        string    `json:"url_path"`
		ExpectedCodes  string    `json:"expected_codes"`
		DomainName     string    `json:"domain_name"`
		HTTPVersion    flexFloat `json:"http_version"`
		AdminStateUp   *bool     `json:"admin_state_up"`
		Tags           []string  `json:"tags"`
	}
)

var (
	listenerProtocols = []string{"TCP", "UDP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "SCTP", "PROMETHEUS"}
	poolProtocols     = []string{"TCP", "UDP", "HTTP", "HTTPS", "PROXY", "PROXYV2", "SCTP"}
	lbAlgorithms      = []string{"ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"}
	monitorTypes      = []string{"HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP"}
	// listenerPools is Octavia's VALID_LISTENER_POOL_PROTOCOL_MAP.
	listenerPools = map[string][]string{
		"TCP":              {"HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP"},
		"HTTP":             {"HTTP", "PROXY", "PROXYV2"},
		"HTTPS":            {"HTTPS", "PROXY", "PROXYV2", "TCP"},
		"TERMINATED_HTTPS": {"HTTP", "PROXY", "PROXYV2"},
		"UDP":              {"UDP"},
		"SCTP":             {"SCTP"},
		"PROMETHEUS":       {},
	}
)

// flexFloat is a number sent as a JSON number or string (gophercloud sends
// http_version as "1.1").
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("invalid number %s", b)
	}
	*f = flexFloat(v)
	return nil
}

// numberFields turns string values of the named attributes into JSON
// numbers, for patching.
func numberFields(obj map[string]json.RawMessage, keys ...string) error {
	for _, k := range keys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var f flexFloat
		if err := f.UnmarshalJSON(raw); err != nil {
			return err
		}
		obj[k] = json.RawMessage(strconv.FormatFloat(float64(f), 'f', -1, 64))
	}
	return nil
}

const maxTimeout = 86400000 // ms, Octavia's upper bound for listener timeouts

func invalidValue(field, value string, valid []string) *response {
	r := octaviaError(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Value should be one of: %s", field, value, strings.Join(valid, ", "))
	return &r
}

func invalid(format string, args ...any) *response { r := octaviaInvalid(format, args...); return &r }

// providerName normalizes a requested provider; "" is amphora.
func providerName(p string) (string, *response) {
	switch p {
	case "", "amphora", "octavia":
		return "amphora", nil
	case "ovn":
		return "ovn", nil
	}
	r := octaviaError(http.StatusBadRequest, "Provider '%s' is not enabled.", p)
	return "", &r
}

func unsupported(provider, format string, args ...any) *response {
	r := octaviaError(http.StatusNotImplemented, "Provider '%s' does not support a requested option: %s", provider, fmt.Sprintf(format, args...))
	return &r
}

// checkListener validates a listener request for a load balancer whose
// VIP is vip, against the listeners it has (others).
func (s *Server) checkListener(req *listenerCreate, provider, vip string, others []*Listener) *response {
	if !slices.Contains(listenerProtocols, req.Protocol) {
		return invalidValue("protocol", req.Protocol, listenerProtocols)
	}
	if req.ProtocolPort < 1 || req.ProtocolPort > 65535 {
		return invalid("protocol_port %d is not between 1 and 65535", req.ProtocolPort)
	}
	if provider == "ovn" && !slices.Contains([]string{"TCP", "UDP", "SCTP"}, req.Protocol) {
		return unsupported(provider, "OVN provider does not support %s protocol", req.Protocol)
	}
	if req.Protocol == "TERMINATED_HTTPS" && req.DefaultTLSContainerRef == "" && len(req.SNIContainerRefs) == 0 {
		return invalid("An SNI or default certificate container reference must be provided for TERMINATED_HTTPS listeners.")
	}
	for _, t := range []*int{req.TimeoutClientData, req.TimeoutMemberConnect, req.TimeoutMemberData, req.TimeoutTCPInspect} {
		if t != nil && (*t < 0 || *t > maxTimeout) {
			return invalid("timeouts must be between 0 and %d, got %d", maxTimeout, *t)
		}
	}
	if req.ConnectionLimit != nil && *req.ConnectionLimit < -1 {
		return invalid("connection_limit must be -1 or more, got %d", *req.ConnectionLimit)
	}
	if errResp := checkCIDRs(req.AllowedCIDRs, vip); errResp != nil {
		return errResp
	}
	for _, l := range others {
		if l.ProtocolPort == req.ProtocolPort && l4(l.Protocol) == l4(req.Protocol) {
			r := octaviaError(http.StatusConflict, "Another Listener on this Load Balancer is already using protocol_port %d", req.ProtocolPort)
			return &r
		}
	}
	return nil
}

// l4 is the transport a listener protocol uses; listeners on one port
// conflict only on the same transport.
func l4(protocol string) string {
	switch protocol {
	case "UDP", "SCTP":
		return protocol
	}
	return "TCP"
}

// checkCIDRs validates allowed_cidrs: valid, and of the VIP's IP version.
func checkCIDRs(cidrs []string, vip string) *response {
	vipAddr, err := netip.ParseAddr(vip)
	for _, c := range cidrs {
		p, perr := netip.ParsePrefix(c)
		if perr != nil {
			return invalid("Invalid input for field/attribute allowed_cidrs. Value: '%s'. Value should be IPv4 or IPv6 CIDR format", c)
		}
		if err == nil && p.Addr().Is4() != vipAddr.Is4() {
			return invalid("CIDR %s IP version incompatible with all VIPs %s IP version.", c, vip)
		}
	}
	return nil
}

// checkPool validates a pool request; listenerProtocol is "" for a pool
// on the load balancer only.
func (s *Server) checkPool(req *poolCreate, provider, listenerProtocol string) *response {
	if !slices.Contains(poolProtocols, req.Protocol) {
		return invalidValue("protocol", req.Protocol, poolProtocols)
	}
	if !slices.Contains(lbAlgorithms, req.LBAlgorithm) {
		return invalidValue("lb_algorithm", req.LBAlgorithm, lbAlgorithms)
	}
	if listenerProtocol != "" && !slices.Contains(listenerPools[listenerProtocol], req.Protocol) {
		return invalid("The pool protocol '%s' is invalid while the listener protocol is '%s'.", req.Protocol, listenerProtocol)
	}
	switch {
	case provider == "amphora" && req.LBAlgorithm == "SOURCE_IP_PORT":
		return unsupported(provider, "Amphora provider does not support SOURCE_IP_PORT algorithm.")
	case provider == "ovn" && req.LBAlgorithm != "SOURCE_IP_PORT":
		return unsupported(provider, "OVN provider does not support %s algorithm", req.LBAlgorithm)
	case provider == "ovn" && !slices.Contains([]string{"TCP", "UDP", "SCTP"}, req.Protocol):
		return unsupported(provider, "OVN provider does not support %s protocol", req.Protocol)
	}
	if sp := req.SessionPersistence; sp != nil {
		valid := []string{"SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE"}
		switch {
		case !slices.Contains(valid, sp.Type):
			return invalidValue("session_persistence.type", sp.Type, valid)
		case sp.Type == "APP_COOKIE" && sp.CookieName == "":
			return invalid("session_persistence cookie_name is required for APP_COOKIE session persistence.")
		case sp.Type != "APP_COOKIE" && sp.CookieName != "":
			return invalid("session_persistence cookie_name must be null for %s session persistence.", sp.Type)
		case req.Protocol == "UDP" && sp.Type != "SOURCE_IP":
			return invalid("Session persistence of type %s is not supported for UDP protocol pools.", sp.Type)
		}
	}
	seen := map[string]bool{}
	for i := range req.Members {
		if errResp := s.checkMember(&req.Members[i]); errResp != nil {
			return errResp
		}
		key := fmt.Sprintf("%s:%d", req.Members[i].Address, req.Members[i].ProtocolPort)
		if seen[key] {
			r := octaviaError(http.StatusConflict, "Another member on this pool is already using ip address %s on protocol_port %d", req.Members[i].Address, req.Members[i].ProtocolPort)
			return &r
		}
		seen[key] = true
	}
	if req.HealthMonitor != nil {
		return checkMonitor(req.HealthMonitor, req.Protocol)
	}
	return nil
}

func (s *Server) checkMember(m *memberCreate) *response {
	if _, err := netip.ParseAddr(m.Address); err != nil {
		return invalid("Invalid input for field/attribute address. Value: '%s'. Value should be IPv4 or IPv6 format", m.Address)
	}
	if m.ProtocolPort < 1 || m.ProtocolPort > 65535 {
		return invalid("protocol_port %d is not between 1 and 65535", m.ProtocolPort)
	}
	if m.Weight != nil && (*m.Weight < 0 || *m.Weight > 256) {
		return invalid("weight %d is not between 0 and 256", *m.Weight)
	}
	if m.MonitorPort != nil && (*m.MonitorPort < 1 || *m.MonitorPort > 65535) {
		return invalid("monitor_port %d is not between 1 and 65535", *m.MonitorPort)
	}
	if _, ok := s.st.subnets.Get(m.SubnetID); m.SubnetID != "" && !ok {
		r := octaviaError(http.StatusBadRequest, "Subnet %s not found.", m.SubnetID)
		return &r
	}
	return nil
}

// checkMonitor validates a health monitor request for a pool of
// poolProtocol.
func checkMonitor(m *monitorCreate, poolProtocol string) *response {
	if !slices.Contains(monitorTypes, m.Type) {
		return invalidValue("type", m.Type, monitorTypes)
	}
	if m.Delay < 1 || m.Timeout < 1 {
		return invalid("delay and timeout must be positive")
	}
	if m.MaxRetries < 1 || m.MaxRetries > 10 {
		return invalid("max_retries %d is not between 1 and 10", m.MaxRetries)
	}
	if m.MaxRetriesDown != nil && (*m.MaxRetriesDown < 1 || *m.MaxRetriesDown > 10) {
		return invalid("max_retries_down %d is not between 1 and 10", *m.MaxRetriesDown)
	}
	isHTTP := m.Type == "HTTP" || m.Type == "HTTPS"
	if !isHTTP {
		for name, v := range map[string]string{"http_method": m.HTTPMethod, "url_path": m.URLPath, "expected_codes": m.ExpectedCodes, "domain_name": m.DomainName} {
			if v != "" {
				return invalid("%s is not a valid option for health monitors of type %s", name, m.Type)
			}
		}
	}
	if m.URLPath != "" && !strings.HasPrefix(m.URLPath, "/") {
		return invalid("URL path %s must start with /", m.URLPath)
	}
	switch {
	case (m.Type == "UDP-CONNECT" || m.Type == "SCTP") && poolProtocol != "UDP" && poolProtocol != "SCTP":
		return invalid("The %s type is only supported for pools of type UDP or SCTP.", m.Type)
	case poolProtocol == "UDP" && !slices.Contains([]string{"UDP-CONNECT", "SCTP", "TCP", "HTTP"}, m.Type):
		return invalid("The associated pool protocol is UDP, so only a UDP-CONNECT, SCTP, TCP or HTTP type health monitor is supported.")
	case (poolProtocol == "UDP" || poolProtocol == "SCTP") && m.Delay < m.Timeout:
		return invalid("The request delay value %d should be larger than the request timeout value %d.", m.Delay, m.Timeout)
	}
	return nil
}
