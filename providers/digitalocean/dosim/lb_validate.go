package dosim

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

var (
	entryProtocols  = []string{"http", "https", "http2", "http3", "tcp", "udp"}
	targetProtocols = []string{"http", "https", "http2", "tcp", "udp"}
	lbSizes         = []string{"lb-small", "lb-medium", "lb-large"}
)

// validateLB checks a create or update request as the API does and
// returns the 422 message, "" when the request is valid. The caller holds
// s.mu.
func (s *Server) validateLB(req *lbRequest) string {
	switch {
	case req.Region == "":
		return "region is required"
	case regionNames[req.Region] == "":
		return fmt.Sprintf("region %q is not a valid region", req.Region)
	case len(req.Name) > 255:
		return "name must be at most 255 characters"
	case req.SizeSlug != "" && req.SizeUnit != 0:
		return "size and size_unit are mutually exclusive"
	case req.SizeSlug != "" && !slices.Contains(lbSizes, req.SizeSlug):
		return fmt.Sprintf("size %q is not a valid load balancer size", req.SizeSlug)
	case req.SizeUnit > 200:
		return "size_unit must be between 1 and 200"
	case !oneOf(req.Type, "", "REGIONAL", "REGIONAL_NETWORK", "GLOBAL"):
		return fmt.Sprintf("type %q is not one of REGIONAL, REGIONAL_NETWORK, GLOBAL", req.Type)
	case !oneOf(req.Network, "", "EXTERNAL", "INTERNAL"):
		return fmt.Sprintf("network %q is not one of EXTERNAL, INTERNAL", req.Network)
	case !oneOf(req.NetworkStack, "", "IPV4", "DUALSTACK"):
		return fmt.Sprintf("network_stack %q is not one of IPV4, DUALSTACK", req.NetworkStack)
	case !oneOf(req.Algorithm, "", "round_robin", "least_connections"):
		return fmt.Sprintf("algorithm %q is not valid", req.Algorithm)
	case req.IP != "" && net.ParseIP(req.IP) == nil:
		return fmt.Sprintf("ip %q is not a valid IP address", req.IP)
	case req.Tag != "" && len(req.DropletIDs) > 0:
		return "tag and droplet_ids are mutually exclusive"
	case req.Tag != "" && !validTag.MatchString(req.Tag):
		return fmt.Sprintf("tag %q is not a valid tag name", req.Tag)
	case req.HTTPIdleTimeoutSeconds != nil && (*req.HTTPIdleTimeoutSeconds < 30 || *req.HTTPIdleTimeoutSeconds > 600):
		return "http_idle_timeout_seconds must be between 30 and 600"
	}
	for _, id := range req.DropletIDs {
		if _, ok := s.st.droplets[id]; !ok {
			return fmt.Sprintf("droplet %d does not exist", id)
		}
	}
	if msg := s.validateRules(req); msg != "" {
		return msg
	}
	if msg := validateHealthCheck(req.HealthCheck, req.ForwardingRules); msg != "" {
		return msg
	}
	if ss := req.StickySessions; ss != nil {
		switch ss.Type {
		case "", "none":
		case "cookies":
			if ss.CookieName == "" || ss.CookieTtlSeconds <= 0 {
				return "sticky_sessions of type cookies need cookie_name and cookie_ttl_seconds"
			}
		default:
			return fmt.Sprintf("sticky_sessions type %q is not one of none, cookies", ss.Type)
		}
	}
	if fw := req.Firewall; fw != nil {
		for _, rule := range slices.Concat(fw.Allow, fw.Deny) {
			if !validFirewallRule(rule) {
				return fmt.Sprintf("firewall rule %q is not of the form ip:<address> or cidr:<block>", rule)
			}
		}
	}
	return ""
}

// validateRules checks the forwarding rules. The caller holds s.mu.
func (s *Server) validateRules(req *lbRequest) string {
	if len(req.ForwardingRules) == 0 {
		return "at least one forwarding rule is required"
	}
	seen := map[string]bool{}
	for _, fr := range req.ForwardingRules {
		switch {
		case !slices.Contains(entryProtocols, fr.EntryProtocol):
			return fmt.Sprintf("entry_protocol %q is not valid", fr.EntryProtocol)
		case !slices.Contains(targetProtocols, fr.TargetProtocol):
			return fmt.Sprintf("target_protocol %q is not valid", fr.TargetProtocol)
		case fr.EntryPort < 1 || fr.EntryPort > 65535:
			return fmt.Sprintf("entry_port %d is not between 1 and 65535", fr.EntryPort)
		case fr.TargetPort < 1 || fr.TargetPort > 65535:
			return fmt.Sprintf("target_port %d is not between 1 and 65535", fr.TargetPort)
		case (fr.EntryProtocol == "udp") != (fr.TargetProtocol == "udp"):
			return "udp forwarding rules must use udp for both entry_protocol and target_protocol"
		case fr.TlsPassthrough && fr.CertificateID != "":
			return "certificate_id and tls_passthrough are mutually exclusive"
		case fr.TlsPassthrough && (!oneOf(fr.EntryProtocol, "https", "http2") || fr.TargetProtocol != fr.EntryProtocol):
			return "tls_passthrough requires https or http2 as both entry_protocol and target_protocol"
		case oneOf(fr.EntryProtocol, "https", "http2", "http3") && !fr.TlsPassthrough && fr.CertificateID == "":
			return fmt.Sprintf("forwarding rule for port %d with entry_protocol %s needs a certificate_id or tls_passthrough", fr.EntryPort, fr.EntryProtocol)
		}
		if fr.CertificateID != "" {
			if _, ok := s.st.certs[fr.CertificateID]; !ok {
				return fmt.Sprintf("certificate %q does not exist", fr.CertificateID)
			}
		}
		// TCP-family and UDP rules may share an entry port.
		key := fmt.Sprintf("%t/%d", fr.EntryProtocol == "udp", fr.EntryPort)
		if seen[key] {
			return fmt.Sprintf("entry_port %d is used by more than one forwarding rule", fr.EntryPort)
		}
		seen[key] = true
	}
	return ""
}

func validateHealthCheck(hc *HealthCheck, rules []ForwardingRule) string {
	if hc == nil {
		return ""
	}
	switch {
	case !oneOf(hc.Protocol, "", "http", "https", "tcp"):
		return fmt.Sprintf("health_check protocol %q is not one of http, https, tcp", hc.Protocol)
	case hc.Port < 0 || hc.Port > 65535:
		return fmt.Sprintf("health_check port %d is not between 1 and 65535", hc.Port)
	case hc.CheckIntervalSeconds != 0 && (hc.CheckIntervalSeconds < 3 || hc.CheckIntervalSeconds > 300):
		return "health_check check_interval_seconds must be between 3 and 300"
	case hc.ResponseTimeoutSeconds != 0 && (hc.ResponseTimeoutSeconds < 3 || hc.ResponseTimeoutSeconds > 300):
		return "health_check response_timeout_seconds must be between 3 and 300"
	case hc.HealthyThreshold != 0 && (hc.HealthyThreshold < 2 || hc.HealthyThreshold > 10):
		return "health_check healthy_threshold must be between 2 and 10"
	case hc.UnhealthyThreshold != 0 && (hc.UnhealthyThreshold < 2 || hc.UnhealthyThreshold > 10):
		return "health_check unhealthy_threshold must be between 2 and 10"
	case hc.Protocol == "tcp" && hc.Path != "":
		return "health_check path is only valid with http or https"
	case hc.Path != "" && !strings.HasPrefix(hc.Path, "/"):
		return "health_check path must start with /"
	}
	// The health check runs over TCP, so it cannot target a port that is
	// only forwarded to as UDP.
	udp, tcp := false, false
	for _, fr := range rules {
		if fr.TargetPort == hc.Port {
			if fr.TargetProtocol == "udp" {
				udp = true
			} else {
				tcp = true
			}
		}
	}
	if udp && !tcp {
		return fmt.Sprintf("health_check port %d is a UDP target port; health checks need a TCP port", hc.Port)
	}
	return ""
}

func validFirewallRule(rule string) bool {
	kind, v, ok := strings.Cut(rule, ":")
	switch {
	case !ok:
		return false
	case kind == "ip":
		return net.ParseIP(v) != nil
	case kind == "cidr":
		_, _, err := net.ParseCIDR(v)
		return err == nil
	}
	return false
}

func oneOf(v string, allowed ...string) bool { return slices.Contains(allowed, v) }
