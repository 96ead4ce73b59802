package brightbox

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Service annotations, with the names, values and defaults of the existing
// Brightbox CCM so that Services move over unchanged. Every key under
// AnnotationPrefix that LoadBalancerConfig does not claim is reported as a
// Warning Event (typos); docs/brightbox/annotations.md is generated from the
// struct tags.
const (
	AnnotationPrefix = "service.beta.kubernetes.io/brightbox-load-balancer-"
	// AnnotationLoadBalancerID records the load balancer's ID on the
	// Service. The CCM writes it after creating (or adopting) the load
	// balancer.
	AnnotationLoadBalancerID = AnnotationPrefix + "id"
)

// Listener protocols, as the annotation and the API spell them.
const (
	protoTCP    = "tcp"
	protoHTTP   = "http"
	protoHTTPWS = "http+ws"
	protoHTTPS  = "https"
)

// standardSSLPort is the Service port that always gets an https listener
// (unless the listener protocol is tcp), as in the existing CCM.
const standardSSLPort = 443

// cloudIPPattern is a cloud IP identifier, as the existing CCM checks it.
var cloudIPPattern = regexp.MustCompile(`^cip-[0-9a-z]{5,}$`)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations on every sync. Every bad annotation is reported at once as a
// Warning Event, and nothing is written to the cloud.
type LoadBalancerConfig struct {
	LoadBalancerID string `annotation:"id" doc:"ID of the load balancer (lba-xxxxx), written by the CCM after it creates or adopts one. Without it the CCM finds the load balancer by its name, <service>.<namespace>.<cluster>, as the existing CCM does."`

	Policy string `annotation:"policy" enum:"least-connections,round-robin,source-address" default:"least-connections" doc:"How the load balancer picks a node (the API's default is least-connections)."`

	ListenerProtocol string `annotation:"listener-protocol" enum:"http,http+ws,https,tcp" default:"http" doc:"Protocol of the listeners: http terminates the connection and parses headers, tcp forwards raw connections. http+ws is accepted for compatibility and makes http listeners (the API has tcp, http and https listeners; http ones carry WebSocket upgrades). With http, port 443 and the ssl-ports get https listeners."`
	// ListenerIdleTimeout is 0 when unset: the API's default.
	ListenerIdleTimeout   uint   `annotation:"listener-idle-timeout" max:"4294967295" doc:"Idle timeout of the listeners, in milliseconds. Unset: the API's default (50000), and a timeout set on the load balancer by other means is left alone."`
	ListenerProxyProtocol string `annotation:"listener-proxy-protocol" enum:"v1,v2,v2-ssl,v2-ssl-cn" doc:"Send the PROXY protocol, in this version, to the nodes. The Service status then gets ipMode Proxy, so in-cluster clients also go through the load balancer."`

	SSLPorts   []string `annotation:"ssl-ports" doc:"Service ports (numbers or names), comma-separated, that get https listeners besides 443. Needs ssl-domains."`
	SSLDomains []string `annotation:"ssl-domains" doc:"Domains, comma-separated, of the Let's Encrypt certificate of the https listeners, besides the cloud IP's own names. Point them at the Service's address (published at once): until every domain is valid, a Normal Event and the ccmkit.io/load-balancer-progress annotation give each domain's status; a domain Let's Encrypt refused is a Warning Event."`

	CloudIPAllocations string `annotation:"cloudip-allocations" doc:"ID (cip-xxxxx) of an existing cloud IP to map to the load balancer instead of allocating one. It replaces spec.loadBalancerIP. A cloud IP named here is never deleted; only one may be given."`

	HealthCheck healthCheckConfig
}

// healthCheckConfig groups the health-check annotations. Unset numbers are
// 0: the API's defaults, and values set on the load balancer by other means
// are left alone.
type healthCheckConfig struct {
	HealthyThreshold   uint   `annotation:"healthcheck-healthy-threshold" max:"4294967295" doc:"Passed checks before a node gets traffic. Unset: the API's default."`
	UnhealthyThreshold uint   `annotation:"healthcheck-unhealthy-threshold" max:"4294967295" doc:"Failed checks before a node gets no traffic. Unset: the API's default."`
	Protocol           string `annotation:"healthcheck-protocol" enum:"tcp,http" doc:"Protocol of the health check. Default: http, or tcp when the listener protocol is tcp and externalTrafficPolicy is not Local."`
	Request            string `annotation:"healthcheck-request" doc:"Path an http health check requests. Default: /healthz."`
	Timeout            uint   `annotation:"healthcheck-timeout" max:"4294967295" doc:"How long a health check may take, in the API's unit (milliseconds). Unset: the API's default."`
	// Interval keeps the existing CCM's key, under the AWS prefix: its
	// Services carry it, so it is read as they wrote it.
	Interval uint `annotation:"service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval" max:"4294967295" doc:"Time between health checks, in the API's unit (milliseconds). The key is under service.beta.kubernetes.io/aws-load-balancer- (sic), as the existing Brightbox CCM reads it. Unset: the API's default."`
}

// Validate checks rules that span annotations, as the existing CCM's
// validation does. The load-balancer pipeline calls it after decoding; a
// failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("annotation %q: %s", annotationKey(key), fmt.Sprintf(format, args...)))
	}
	if c.ListenerProtocol == protoTCP {
		if len(c.SSLPorts) > 0 {
			bad("ssl-ports", "SSL ports are not supported with the tcp listener protocol")
		}
		if len(c.SSLDomains) > 0 {
			bad("ssl-domains", "SSL domains are not supported with the tcp listener protocol")
		}
	}
	if len(c.SSLPorts) > 0 && len(c.SSLDomains) == 0 {
		bad("ssl-ports", "SSL needs a list of domains to certify: add %s", annotationKey("ssl-domains"))
	}
	for _, d := range c.SSLDomains {
		if d == "" || strings.ContainsAny(d, " /:") {
			bad("ssl-domains", "%s is not a domain name", annotations.Quote(d))
		}
	}
	if c.CloudIPAllocations != "" && !cloudIPPattern.MatchString(c.CloudIPAllocations) {
		bad("cloudip-allocations", "%s is not a cloud IP ID (one cip-xxxxx)", annotations.Quote(c.CloudIPAllocations))
	}
	if r := c.HealthCheck.Request; r != "" {
		if u, err := url.Parse("http://example.com:6443" + r); err != nil || u.Path != r {
			bad("healthcheck-request", "%s is not a URL path", annotations.Quote(r))
		}
	}
	return errors.Join(errs...)
}

// listenerProtocol is the API's protocol for the listeners that are not
// https: http+ws is http.
func (c *LoadBalancerConfig) listenerProtocol() string {
	if c.ListenerProtocol == protoHTTPWS {
		return protoHTTP
	}
	return c.ListenerProtocol
}

// annotationKey returns the full annotation for a key relative to the
// prefix.
func annotationKey(key string) string { return AnnotationPrefix + key }
