package digitalocean

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Service annotations, with the names and meanings of the existing
// DigitalOcean CCM so that Services move over unchanged. Every key under
// AnnotationPrefix that LoadBalancerConfig does not claim is reported as a
// Warning Event (typos); docs/digitalocean/annotations.md is generated from
// the struct tags.
const (
	AnnotationPrefix = "service.beta.kubernetes.io/do-loadbalancer-"
	// AnnotationLoadBalancerID records the load balancer's ID on the Service.
	// The CCM writes it after creating the load balancer; set it by hand to
	// adopt an existing one.
	AnnotationLoadBalancerID = "kubernetes.digitalocean.com/load-balancer-id"
	// AnnotationDisown makes the CCM leave the load balancer alone: no
	// update, and no delete when the Service goes.
	AnnotationDisown = "service.kubernetes.io/do-loadbalancer-disown"
)

// Protocols of forwarding rules, as the API spells them.
const (
	protoTCP   = "tcp"
	protoUDP   = "udp"
	protoHTTP  = "http"
	protoHTTPS = "https"
	protoHTTP2 = "http2"
	protoHTTP3 = "http3"
)

// kube-proxy's health endpoint: what the load balancer probes when the
// Service routes to every node (externalTrafficPolicy: Cluster), so a node
// whose kube-proxy is down gets no traffic.
const (
	kubeProxyHealthPort = 10256
	kubeProxyHealthPath = "/healthz"
)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations on every sync. Every bad annotation is reported at once as a
// Warning Event, and nothing is written to the cloud.
type LoadBalancerConfig struct {
	LoadBalancerID string `annotation:"kubernetes.digitalocean.com/load-balancer-id" doc:"ID of the load balancer, written by the CCM after it creates one. Set it to adopt an existing load balancer instead of creating one."`
	Name           string `annotation:"name" doc:"Name of the load balancer (at most 255 characters; letters, digits, dots and dashes, starting with a letter or digit). Default: 'a' followed by the Service UID without dashes, truncated to 32 characters. Changing it renames the load balancer."`
	Disown         bool   `annotation:"service.kubernetes.io/do-loadbalancer-disown" doc:"Stop managing the load balancer: the CCM neither updates it nor deletes it with the Service."`

	Protocol   string  `annotation:"protocol" enum:"tcp,http,https,http2" default:"tcp" doc:"Protocol of every port not named by the per-port annotations below. UDP Service ports are always udp. https and http2 need certificate-id, certificate-name or tls-passthrough."`
	HTTPPorts  []int32 `annotation:"http-ports" min:"1" max:"65535" doc:"Service ports that use http."`
	TLSPorts   []int32 `annotation:"tls-ports" min:"1" max:"65535" doc:"Service ports that use https. Default: 443 when a certificate or tls-passthrough is set (unless http2-ports lists 443)."`
	HTTP2Ports []int32 `annotation:"http2-ports" min:"1" max:"65535" doc:"Service ports that use http2; needs a certificate or tls-passthrough."`
	HTTP3Port  int32   `annotation:"http3-port" min:"1" max:"65535" doc:"The Service port that uses http3; needs a certificate (no tls-passthrough)."`

	CertificateID   string `annotation:"certificate-id" doc:"ID of the certificate for https, http2 and http3 ports. When DigitalOcean renews a Let's Encrypt certificate it gets a new ID: the CCM follows the load balancer to the new certificate and updates this annotation."`
	CertificateName string `annotation:"certificate-name" doc:"Name of the certificate, looked up on every sync; survives Let's Encrypt renewals. Exclusive with certificate-id."`
	TLSPassthrough  bool   `annotation:"tls-passthrough" doc:"Pass TLS through to the nodes instead of terminating it on the load balancer."`
	RedirectHTTP    bool   `annotation:"redirect-http-to-https" doc:"Redirect http requests to https."`
	// DisableLetsEncryptDNSRecords is a pointer: unset leaves the API's
	// default.
	DisableLetsEncryptDNSRecords *bool `annotation:"disable-lets-encrypt-dns-records" doc:"Do not create DNS records for a Let's Encrypt certificate's domains."`

	HealthCheck healthCheckConfig

	StickySessionsType       string `annotation:"sticky-sessions-type" enum:"none,cookies" default:"none" doc:"Session affinity: none or cookies (cookies needs sticky-sessions-cookie-name and -cookie-ttl)."`
	StickySessionsCookieName string `annotation:"sticky-sessions-cookie-name" doc:"Name of the sticky-session cookie."`
	StickySessionsCookieTTL  int    `annotation:"sticky-sessions-cookie-ttl" min:"1" doc:"Lifetime of the sticky-session cookie, in seconds."`

	Algorithm string `annotation:"algorithm" enum:"round_robin,least_connections" default:"round_robin" deprecated:"the API ignores it" doc:"Balancing algorithm."`
	SizeSlug  string `annotation:"size-slug" enum:"lb-small,lb-medium,lb-large" doc:"Size of a REGIONAL load balancer. Exclusive with size-unit. Unset keeps the load balancer's current size."`
	SizeUnit  uint32 `annotation:"size-unit" min:"1" max:"200" doc:"Number of nodes of the load balancer. Exclusive with size-slug. Unset keeps the load balancer's current size."`

	ProxyProtocol    bool   `annotation:"enable-proxy-protocol" doc:"Send PROXY protocol to the nodes. The Service status then gets ipMode Proxy, so in-cluster clients also go through the load balancer."`
	BackendKeepalive bool   `annotation:"enable-backend-keepalive" doc:"Keep connections to the nodes open (http)."`
	HTTPIdleTimeout  uint64 `annotation:"http-idle-timeout-seconds" min:"30" max:"600" default:"60" doc:"Idle timeout of http connections, in seconds."`

	AllowRules []string `annotation:"allow-rules" doc:"Load balancer firewall: sources allowed, as ip:<address> or cidr:<block>, comma-separated. spec.loadBalancerSourceRanges, when set, replaces it."`
	DenyRules  []string `annotation:"deny-rules" doc:"Load balancer firewall: sources denied, as ip:<address> or cidr:<block>, comma-separated."`

	Type         string `annotation:"type" enum:"REGIONAL,REGIONAL_NETWORK" doc:"Load balancer type. Default: DEFAULT_LB_TYPE. REGIONAL_NETWORK forwards tcp and udp only."`
	Network      string `annotation:"network" enum:"EXTERNAL,INTERNAL" default:"EXTERNAL" doc:"EXTERNAL for a public load balancer, INTERNAL for one reachable only inside the VPC. Set at creation."`
	NetworkStack string `annotation:"network-stack" enum:"IPV4,DUALSTACK" default:"IPV4" doc:"IPV4, or DUALSTACK for an IPv6 address as well. Set at creation."`
	Hostname     string `annotation:"hostname" doc:"Publish this hostname in the Service status instead of the IP, so in-cluster clients resolve it and go through the load balancer."`
	IP           string `annotation:"ip" doc:"Reserved (BYOIP) address for a new load balancer. Used at creation only."`
	SubnetUUID   string `annotation:"subnet-uuid" doc:"VPC subnet of a new load balancer. Used at creation only."`

	// DropletTargets is pre-filled from DO_LB_DROPLET_TAG (NewConfig).
	DropletTargets string `annotation:"droplet-targets" enum:"tag,droplet-ids" doc:"How the load balancer names its droplets: tag targets the droplet tag DO_LB_DROPLET_TAG (which must be set), droplet-ids lists the droplets. Default: tag when DO_LB_DROPLET_TAG is set, else droplet-ids. Changing it (or DO_LB_DROPLET_TAG) moves the load balancer at its next sync, in one update."`
}

// Values of the droplet-targets annotation.
const (
	targetsTag        = "tag"
	targetsDropletIDs = "droplet-ids"
)

// healthCheckConfig groups the health-check annotations.
type healthCheckConfig struct {
	// Override is a tri-state: nil means "honour protocol/port/path when
	// any of them is set".
	Override           *bool  `annotation:"override-health-check" doc:"true: probe what healthcheck-protocol, -port and -path say. false: always probe kube-proxy (or the healthCheckNodePort with externalTrafficPolicy Local). Unset: as true when any of the three is set (the existing CCM ignored them unless this was true)."`
	Protocol           string `annotation:"healthcheck-protocol" enum:"tcp,http,https" doc:"Protocol of the health check. Default: tcp when overridden."`
	Port               int32  `annotation:"healthcheck-port" min:"1" max:"65535" doc:"Service port whose NodePort is probed. Default: the first port."`
	Path               string `annotation:"healthcheck-path" doc:"Path of an http or https health check. Default: /."`
	IntervalSeconds    int    `annotation:"healthcheck-check-interval-seconds" min:"3" max:"300" default:"3" doc:"Seconds between two health checks."`
	TimeoutSeconds     int    `annotation:"healthcheck-response-timeout-seconds" min:"3" max:"300" default:"5" doc:"Seconds to wait for a health-check response."`
	UnhealthyThreshold int    `annotation:"healthcheck-unhealthy-threshold" min:"2" max:"10" default:"3" doc:"Failed checks before a node is taken out."`
	HealthyThreshold   int    `annotation:"healthcheck-healthy-threshold" min:"2" max:"10" default:"5" doc:"Passed checks before a node is put back."`
}

// overridden reports whether the health check follows the annotations
// rather than kube-proxy's health endpoint.
func (h *healthCheckConfig) overridden() bool {
	if h.Override != nil {
		return *h.Override
	}
	return h.Protocol != "" || h.Port != 0 || h.Path != ""
}

const maxNameLength = 255

// Validate checks rules that span annotations. The load-balancer pipeline
// calls it after decoding; a failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("annotation %q: %s", annotationKey(key), fmt.Sprintf(format, args...)))
	}
	if c.Name != "" && !validLBName(c.Name) {
		bad("name", "%s is not a valid load balancer name (at most %d letters, digits, dots and dashes, starting with a letter or digit)", annotations.Quote(c.Name), maxNameLength)
	}
	if c.SizeSlug != "" && c.SizeUnit != 0 {
		bad("size-unit", "cannot be set together with %s", annotationKey("size-slug"))
	}
	if c.CertificateID != "" && c.CertificateName != "" {
		bad("certificate-name", "cannot be set together with %s", annotationKey("certificate-id"))
	}
	hasCert := c.CertificateID != "" || c.CertificateName != ""
	if c.TLSPassthrough && hasCert {
		bad("tls-passthrough", "cannot be set together with a certificate: the load balancer either terminates TLS or passes it through")
	}
	if c.HTTP3Port != 0 && !hasCert {
		bad("http3-port", "needs certificate-id or certificate-name")
	}
	if (len(c.TLSPorts) > 0 || len(c.HTTP2Ports) > 0 || c.Protocol == protoHTTPS || c.Protocol == protoHTTP2) && !hasCert && !c.TLSPassthrough {
		bad("tls-ports", "https and http2 ports need certificate-id, certificate-name or tls-passthrough")
	}
	for _, pair := range [][2]string{{"http-ports", "tls-ports"}, {"http-ports", "http2-ports"}, {"tls-ports", "http2-ports"}} {
		if p, ok := sharedPort(c.ports(pair[0]), c.ports(pair[1])); ok {
			bad(pair[1], "port %d is also in %s", p, annotationKey(pair[0]))
		}
	}
	if c.HTTP3Port != 0 && slices.Contains(slices.Concat(c.HTTPPorts, c.TLSPorts, c.HTTP2Ports), c.HTTP3Port) {
		bad("http3-port", "port %d is also in another *-ports annotation", c.HTTP3Port)
	}
	if c.StickySessionsType == "cookies" && (c.StickySessionsCookieName == "" || c.StickySessionsCookieTTL == 0) {
		bad("sticky-sessions-type", "cookies needs %s and %s", annotationKey("sticky-sessions-cookie-name"), annotationKey("sticky-sessions-cookie-ttl"))
	}
	if c.Type == LoadBalancerTypeRegionalNetwork {
		if c.usesHTTP() {
			bad("type", "REGIONAL_NETWORK load balancers forward tcp and udp only; remove the http/https/http2/http3 protocol annotations or use type REGIONAL")
		}
		if c.SizeSlug != "" {
			bad("size-slug", "applies to REGIONAL load balancers only")
		}
	}
	hc := &c.HealthCheck
	if hc.Path != "" {
		if !strings.HasPrefix(hc.Path, "/") {
			bad("healthcheck-path", "%s must start with /", annotations.Quote(hc.Path))
		}
		if hc.Protocol == protoTCP {
			bad("healthcheck-path", "needs healthcheck-protocol http or https")
		}
	}
	for _, kv := range []struct {
		key   string
		rules []string
	}{{"allow-rules", c.AllowRules}, {"deny-rules", c.DenyRules}} {
		for _, r := range kv.rules {
			if !validFirewallRule(r) {
				bad(kv.key, "%s is not ip:<address> or cidr:<block>", annotations.Quote(r))
			}
		}
	}
	return errors.Join(errs...)
}

func (c *LoadBalancerConfig) usesHTTP() bool {
	return c.Protocol != protoTCP || len(c.HTTPPorts)+len(c.TLSPorts)+len(c.HTTP2Ports) > 0 || c.HTTP3Port != 0 ||
		c.TLSPassthrough || c.CertificateID != "" || c.CertificateName != "" || c.RedirectHTTP
}

func (c *LoadBalancerConfig) ports(key string) []int32 {
	switch key {
	case "http-ports":
		return c.HTTPPorts
	case "tls-ports":
		return c.TLSPorts
	case "http2-ports":
		return c.HTTP2Ports
	}
	return nil
}

func sharedPort(a, b []int32) (int32, bool) {
	for _, p := range a {
		if slices.Contains(b, p) {
			return p, true
		}
	}
	return 0, false
}

// annotationKey returns the full annotation for a key relative to the
// prefix.
func annotationKey(key string) string { return AnnotationPrefix + key }

func validLBName(name string) bool {
	if len(name) == 0 || len(name) > maxNameLength {
		return false
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || (r != '-' && r != '.')) {
			return false
		}
	}
	return true
}
