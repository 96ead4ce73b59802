package rancher

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Defaults of the cluster-wide load-balancer settings.
const (
	// defaultLBStack is the stack that holds every load balancer, as the
	// existing CCM named it; its externalId is the name followed by "://".
	defaultLBStack = "kubernetes-loadbalancers"
	// imageSetting is the Cattle setting naming the HAProxy image of
	// load-balancer services, which the existing CCM read too.
	imageSetting = "lb.instance.image"
)

// LoadBalancerSettings are the cluster-wide load-balancer settings, part of
// Config. A Service's image annotation overrides the image.
type LoadBalancerSettings struct {
	Stack  string `json:"stack" env:"RANCHER_LB_STACK" default:"kubernetes-loadbalancers" doc:"Stack that holds the load-balancer services and their external services; it is found by its name and the externalId <name>:// (kubernetes-loadbalancers:// by default, as the existing CCM made it, so its stack and load balancers are adopted), and created when missing."`
	Image  string `json:"image" env:"RANCHER_LB_IMAGE" doc:"HAProxy image of new load balancers (and of those whose ports change), such as rancher/lb-service-haproxy:v0.9.14. Unset: the environment's lb.instance.image setting, read at the first load balancer the CCM creates. A Service's image annotation overrides it."`
	Global bool   `json:"global" env:"RANCHER_LB_GLOBAL" default:"false" doc:"Run every load balancer's HAProxy containers on every active host (Cattle's io.rancher.scheduler.global launch-config label), so that each Service's status lists every host's IP and a joining host serves it too. Off (the default, as the existing CCM made them): a load balancer runs scale containers, one by default. A Service's global annotation overrides it; a change upgrades the load balancers in place, keeping their IDs."`
}

// stackName is the load-balancer stack's name.
func (s *LoadBalancerSettings) stackName() string {
	if s.Stack == "" {
		return defaultLBStack
	}
	return s.Stack
}

// stackExternalID is the externalId of the load-balancer stack, as the
// existing CCM set it: "kubernetes-loadbalancers://".
func (s *LoadBalancerSettings) stackExternalID() string { return s.stackName() + "://" }

// cattleNamePattern is what Cattle accepts as a stack or service name.
var cattleNamePattern = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

// validate checks the settings Config.Validate cannot check by their tags.
func (s *LoadBalancerSettings) validate() error {
	var errs []error
	if s.Stack != "" && !cattleNamePattern.MatchString(s.Stack) {
		errs = append(errs, fmt.Errorf("RANCHER_LB_STACK: %q is not a stack name (letters, digits and -, at most 63)", s.Stack))
	}
	if s.Image != "" && !imagePattern.MatchString(s.Image) {
		errs = append(errs, fmt.Errorf("RANCHER_LB_IMAGE: %q is not a Docker image reference", s.Image))
	}
	return errors.Join(errs...)
}

// imagePattern is a Docker image reference, without the docker: prefix
// Cattle's imageUuid adds.
var imagePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]*$`)

// AnnotationPrefix is the prefix of the Service annotations the Rancher
// provider reads. The existing CCM read none, so the keys follow the
// service.beta.kubernetes.io/<cloud>-load-balancer- form of the other
// clouds. Every key under it that LoadBalancerConfig does not claim is
// reported as a Warning Event; docs/rancher/annotations.md is generated
// from the struct tags.
const AnnotationPrefix = "service.beta.kubernetes.io/rancher-load-balancer-"

// AnnotationLoadBalancerID records the load-balancer service's ID (1s5) on
// the Service. The CCM writes it after creating or adopting the load
// balancer.
const AnnotationLoadBalancerID = AnnotationPrefix + "id"

// Port-rule protocols, as Cattle spells them.
const (
	protoTCP   = "tcp"
	protoUDP   = "udp"
	protoHTTP  = "http"
	protoHTTPS = "https"
	protoTLS   = "tls"
	protoSNI   = "sni"
)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations on every sync. Every bad annotation is reported at once as a
// Warning Event, and nothing is written to the cloud.
type LoadBalancerConfig struct {
	LoadBalancerID string `annotation:"id" doc:"ID of the load-balancer service (1s5), written by the CCM after it creates or adopts one. Without it the CCM finds the load balancer by its name, lb-<the Service's default load-balancer name>, in the load-balancer stack, as the existing CCM does."`

	Protocol      string            `annotation:"protocol" enum:"tcp,http,https,tls,sni" default:"tcp" doc:"Protocol of the port rules of the Service's TCP ports: tcp forwards connections; http proxies HTTP (and allows stickiness); https, tls and sni terminate TLS with certificate-ids' certificates and forward HTTP (https) or TCP (tls, sni). UDP ports are always udp."`
	PortProtocols map[string]string `annotation:"port-protocols" doc:"Protocols of single TCP ports, overriding protocol: port=protocol pairs, comma-separated, the port given by number or name (80=http,443=https)."`

	CertificateIDs []string `annotation:"certificate-ids" doc:"Cattle certificate IDs (1c3), comma-separated, for the https, tls and sni port rules: the first is the default certificate, the others are offered by SNI. Required when a port rule terminates TLS."`

	StickinessCookie string `annotation:"stickiness-cookie" doc:"Name of the HAProxy cookie that keeps an HTTP client on one node (lbConfig.stickinessPolicy). Only for http and https port rules. Unset: no stickiness."`
	StickinessMode   string `annotation:"stickiness-mode" enum:"insert,rewrite,prefix" default:"insert" doc:"How HAProxy handles the stickiness cookie: insert adds its own, rewrite and prefix reuse one the application sets."`

	Image string `annotation:"image" doc:"HAProxy image of the load balancer (rancher/lb-service-haproxy:v0.9.14). A change upgrades the load balancer in place. Unset: RANCHER_LB_IMAGE, else the lb.instance.image setting at creation (an existing load balancer keeps its image)."`

	Global bool  `annotation:"global" doc:"Run the load balancer's HAProxy containers on every active host (Cattle's io.rancher.scheduler.global launch-config label): the Service's status lists every host's IP (a host joining Cattle serves it at once, and is in the status from the Service's next sync), and a host failing loses one address, not the load balancer. Unset: RANCHER_LB_GLOBAL (false by default). A change upgrades the load balancer in place (same ID). Cannot be combined with scale."`
	Scale  int64 `annotation:"scale" min:"1" doc:"How many HAProxy containers run the load balancer, each on its own host: the Service's status lists their hosts' IPs. A change is one update of the load balancer (same ID). Unset: the CCM leaves the scale as it is (1 for a new load balancer, Cattle's default), so a load balancer scaled in Rancher keeps its scale. Not for global load balancers (the global annotation or RANCHER_LB_GLOBAL)."`

	HealthCheck healthCheckConfig
}

// newConfig returns a Service's config before its annotations are read:
// the cluster-wide defaults of settings that annotations override.
func (s *LoadBalancerSettings) newConfig() *LoadBalancerConfig {
	return &LoadBalancerConfig{Global: s.Global}
}

// healthCheckConfig groups the health-check annotations. The external
// service holding the nodes is checked only for Services of
// externalTrafficPolicy Local, on their healthCheckNodePort, so that only
// nodes with a ready endpoint get traffic.
type healthCheckConfig struct {
	Interval           int64 `annotation:"healthcheck-interval" min:"100" max:"3600000" default:"2000" doc:"Time between health checks of each node, in milliseconds (externalTrafficPolicy Local only). A change replaces the external service holding the nodes (Cattle cannot change a health check in place); the load balancer keeps serving meanwhile."`
	ResponseTimeout    int64 `annotation:"healthcheck-response-timeout" min:"100" max:"3600000" default:"2000" doc:"How long a health check may take, in milliseconds (externalTrafficPolicy Local only)."`
	HealthyThreshold   int64 `annotation:"healthcheck-healthy-threshold" min:"1" max:"100" default:"2" doc:"Passed checks before a node gets traffic (externalTrafficPolicy Local only)."`
	UnhealthyThreshold int64 `annotation:"healthcheck-unhealthy-threshold" min:"1" max:"100" default:"3" doc:"Failed checks before a node gets no traffic (externalTrafficPolicy Local only)."`
}

// Validate checks rules that span annotations. The load-balancer pipeline
// calls it after decoding; a failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("annotation %q: %s", annotationKey(key), fmt.Sprintf(format, args...)))
	}
	for _, port := range slices.Sorted(maps.Keys(c.PortProtocols)) { // the same Event text every sync
		proto := c.PortProtocols[port]
		if port == "" {
			bad("port-protocols", "a protocol without a port")
		}
		if !isTCPProtocol(strings.ToLower(proto)) {
			bad("port-protocols", "port %s: %s is not one of tcp, http, https, tls, sni", port, annotations.Quote(proto))
		}
	}
	for _, id := range c.CertificateIDs {
		if !cattleIDPattern.MatchString(id) {
			bad("certificate-ids", "%s is not a Cattle certificate ID (1c3)", annotations.Quote(id))
		}
	}
	if c.Image != "" && !imagePattern.MatchString(c.Image) {
		bad("image", "%s is not a Docker image reference", annotations.Quote(c.Image))
	}
	if c.StickinessCookie != "" && !cookiePattern.MatchString(c.StickinessCookie) {
		bad("stickiness-cookie", "%s is not a cookie name", annotations.Quote(c.StickinessCookie))
	}
	if c.Scale != 0 && c.Global {
		bad("scale", "a global load balancer (annotation %q, or RANCHER_LB_GLOBAL) runs on every active host: set one of scale and global", annotationKey("global"))
	}
	return errors.Join(errs...)
}

// cattleIDPattern is a Cattle resource ID: a digit, a type letter and a
// number (1c3, 1s15).
var cattleIDPattern = regexp.MustCompile(`^[0-9]+[a-z]+[0-9]+$`)

// cookiePattern is an HTTP cookie name (an RFC 6265 token).
var cookiePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

func isTCPProtocol(p string) bool {
	switch p {
	case protoTCP, protoHTTP, protoHTTPS, protoTLS, protoSNI:
		return true
	}
	return false
}

// terminatesTLS reports whether a port rule of this protocol needs a
// certificate.
func terminatesTLS(p string) bool { return p == protoHTTPS || p == protoTLS || p == protoSNI }

// portProtocol is the protocol of the port rule of a TCP Service port:
// port-protocols by number, then by name, then protocol.
func (c *LoadBalancerConfig) portProtocol(port int32, name string) string {
	if p, ok := c.PortProtocols[strconv.Itoa(int(port))]; ok {
		return strings.ToLower(p)
	}
	if p, ok := c.PortProtocols[name]; ok && name != "" {
		return strings.ToLower(p)
	}
	if c.Protocol == "" {
		return protoTCP
	}
	return c.Protocol
}

// annotationKey returns the full annotation for a key relative to the
// prefix.
func annotationKey(key string) string { return AnnotationPrefix + key }
