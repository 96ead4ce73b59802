package triton

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Load-balancer modes: a Moirai appliance (the cloud-load-balancer image)
// per Service, or CNS service names on the nodes. auto, the cluster-wide
// default, is moirai when the account can see the appliance's image and
// cns otherwise. none, cluster-wide only, turns the load balancers off:
// the only mode an account without CNS can run (lb_disabled.go).
const (
	modeMoirai = "moirai"
	modeCNS    = "cns"
	modeAuto   = "auto"
	modeNone   = "none"
)

// Defaults of the cluster-wide settings.
const (
	// defaultLBImage is the name of the Moirai appliance image; the newest
	// version the account can see is used.
	defaultLBImage = "cloud-load-balancer"
	// defaultKubeProxyHealthPort is kube-proxy's --healthz-bind-address
	// port: the appliance checks it for Services of externalTrafficPolicy
	// Cluster.
	defaultKubeProxyHealthPort = 10256
)

// LoadBalancerSettings are the cluster-wide load-balancer settings, part of
// Config. Per-Service annotations (LoadBalancerConfig) override the mode
// and the package.
type LoadBalancerSettings struct {
	Mode                string   `json:"mode" env:"TRITON_LB_MODE" default:"auto" doc:"How Services of type LoadBalancer are served: moirai (one Triton Moirai appliance, the cloud-load-balancer image, per Service), cns (Container Name Service names on the nodes: DNS only, no port mapping), auto (moirai when the account can see the appliance image, else cns) or none (no load balancers, the one mode an account without CNS can run: the service controller does not run, and a Service of type LoadBalancer gets a Warning Event instead of an address). A Service's mode annotation overrides it, unless it is none."`
	Package             string   `json:"package" env:"TRITON_LB_PACKAGE" doc:"Package (name or ID) of the Moirai appliances. Unset: the account's smallest package by memory, found at start-up."`
	Image               string   `json:"image" env:"TRITON_LB_IMAGE" default:"cloud-load-balancer" doc:"Image of the Moirai appliances: a name (the newest active version the account can see is used) or an image UUID."`
	Networks            []string `json:"networks" env:"TRITON_LB_NETWORKS" doc:"Networks (names or IDs, comma-separated) of the Moirai appliances. Unset: the account's first public network (by name) for the Service's address, plus the non-public (fabric) networks of the Service's nodes, which the appliance reaches them on."`
	KubeProxyHealthPort int32    `json:"kubeProxyHealthPort" env:"TRITON_LB_KUBE_PROXY_HEALTH_PORT" default:"10256" doc:"Port of kube-proxy's /healthz on the nodes, which the appliances check for Services of externalTrafficPolicy Cluster (Local ones are checked on their healthCheckNodePort)."`
	NodeService         string   `json:"nodeService" env:"TRITON_LB_NODE_SERVICE" doc:"CNS service name every node of a Moirai load balancer joins (in its triton.cns.services tag); the appliances reach the nodes by its private-zone name. Unset: k8s-<cluster name>-nodes."`
	CNSPublicZone       string   `json:"cnsPublicZone" env:"TRITON_CNS_PUBLIC_ZONE" doc:"DNS zone of the CNS names on public networks, used in the Services' hostnames (<service>.svc.<account UUID>.<zone>). Unset: <datacenter>.triton.zone, as in Triton's public cloud; private clouds set their own suffix."`
	CNSPrivateZone      string   `json:"cnsPrivateZone" env:"TRITON_CNS_PRIVATE_ZONE" doc:"DNS zone of the CNS names on private and fabric networks, which the Moirai appliances resolve the nodes by. Unset: <datacenter>.cns.joyent.com, as in Triton's public cloud."`
}

// validate checks the settings Config.Validate cannot check by their tags.
func (s *LoadBalancerSettings) validate() error {
	var errs []error
	switch s.Mode {
	case "", modeAuto, modeMoirai, modeCNS, modeNone:
	default:
		errs = append(errs, fmt.Errorf("TRITON_LB_MODE: %q is not one of moirai, cns, auto, none", s.Mode))
	}
	if p := s.KubeProxyHealthPort; p < 0 || p > 65534 {
		errs = append(errs, fmt.Errorf("TRITON_LB_KUBE_PROXY_HEALTH_PORT: %d is not a port (1..65534)", p))
	}
	if s.NodeService != "" && !cnsLabelPattern.MatchString(s.NodeService) {
		errs = append(errs, fmt.Errorf("TRITON_LB_NODE_SERVICE: %q is not a CNS service name ([a-z][a-z0-9-]*, at most 63 characters)", s.NodeService))
	}
	for _, z := range []struct{ env, zone string }{{"TRITON_CNS_PUBLIC_ZONE", s.CNSPublicZone}, {"TRITON_CNS_PRIVATE_ZONE", s.CNSPrivateZone}} {
		if z.zone != "" && !dnsZonePattern.MatchString(z.zone) {
			errs = append(errs, fmt.Errorf("%s: %q is not a DNS zone", z.env, z.zone))
		}
	}
	for _, n := range s.Networks {
		if strings.TrimSpace(n) == "" {
			errs = append(errs, errors.New("TRITON_LB_NETWORKS: an empty network name"))
		}
	}
	return errors.Join(errs...)
}

// dnsZonePattern is a DNS name of lower-case labels.
var dnsZonePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// AnnotationPrefix is the prefix of the Service annotations the Triton
// provider reads. There is no earlier Triton CCM whose keys Services carry,
// and prefixes under kubernetes.io are Kubernetes' own; so, as the
// Kubernetes conventions ask, the keys sit under a domain of the cloud's
// maintainers (TritonDataCenter, tritondatacenter.com). Every key under it
// that LoadBalancerConfig does not claim is reported as a Warning Event;
// docs/triton/annotations.md is generated from the struct tags.
const AnnotationPrefix = "triton.tritondatacenter.com/load-balancer-"

// AnnotationLoadBalancerID records the load balancer on the Service: the
// appliance's machine UUID (Moirai), or cns:<service name> (CNS). The CCM
// writes it after creating or adopting the load balancer.
const AnnotationLoadBalancerID = AnnotationPrefix + "id"

// Moirai listener types, as the portmap spells them.
const (
	listenerTCP           = "tcp"
	listenerTCPProxyV2    = "tcp-proxy-v2"
	listenerHTTP          = "http"
	listenerHTTPS         = "https"
	listenerHTTPSInsecure = "https+insecure"
	listenerHTTPSHTTP     = "https-http"
)

// Bounds of the appliance's backends per port (max_rs), as Moirai clamps
// them.
const (
	minBackends = 32
	maxBackends = 1024
)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations on every sync. Every bad annotation is reported at once as a
// Warning Event, and nothing is written to the cloud.
type LoadBalancerConfig struct {
	LoadBalancerID string `annotation:"id" doc:"The load balancer: the Moirai appliance's machine UUID, or cns:<service name> in CNS mode. Written by the CCM after it creates or adopts one; without it the CCM finds the appliance by its k8s-service-uid tag."`

	Mode string `annotation:"mode" enum:"moirai,cns" doc:"moirai: a Triton Moirai appliance (HAProxy, the cloud-load-balancer image) serves the Service, on its own public IP and CNS name, forwarding each Service port to the nodes' NodePort. cns: no appliance; the Service's nodes join a CNS service (the triton.cns.services tag) and the Service's address is its CNS hostname, which resolves to the Ready nodes. DNS maps no ports: clients connect to the NodePort (published in the name's SRV records), not the Service port. Unset: the cluster's TRITON_LB_MODE."`

	ListenerType string `annotation:"listener-type" enum:"tcp,tcp-proxy-v2,http,https,https+insecure,https-http" default:"tcp" doc:"Moirai: how the appliance serves every Service port. tcp forwards connections; tcp-proxy-v2 also sends the PROXY protocol v2 header (the Service status then gets ipMode Proxy); http proxies HTTP (with X-Forwarded-For and a sticky cookie); https-http terminates TLS with certificate-name's certificate and proxies HTTP to the nodes; https and https+insecure proxy HTTPS to HTTPS nodes, checking their certificates or not."`

	CertificateName []string `annotation:"certificate-name" doc:"Moirai: DNS names, comma-separated, of the appliance's Let's Encrypt certificate: the first is the subject, the others alternative names. They must resolve to the Service's address (its CNS hostname can be one). Unset: a self-signed certificate. Moirai cannot go back to a self-signed certificate once it used a named one."`

	MaxBackends uint `annotation:"max-backends" min:"32" max:"1024" doc:"Moirai: how many nodes the appliance balances each port over (max_rs). Unset: the number of nodes rounded up to a multiple of 32, so that a node joining or leaving seldom rewrites it."`

	Timeouts timeoutsConfig

	MetricsACL []netip.Prefix `annotation:"metrics-acl" doc:"Moirai: CIDRs, comma-separated, allowed to read the appliance's HAProxy Prometheus metrics (port 8405); setting it turns the metrics endpoint on."`

	Package string `annotation:"package" doc:"Moirai: package (name or ID) of this Service's appliance, instead of TRITON_LB_PACKAGE. Read when the appliance is created: changing it later has no effect."`
}

// timeoutsConfig groups the appliance's HAProxy timeouts (Moirai's
// timeouts metadata); unset ones keep Moirai's defaults.
type timeoutsConfig struct {
	Connect time.Duration `annotation:"timeout-connect" unit:"ms" min:"1ms" max:"60m" doc:"Moirai: how long the appliance waits for a node to accept a connection. A duration (5s) or milliseconds. Unset: Moirai's default (2s)."`
	Client  time.Duration `annotation:"timeout-client" unit:"ms" min:"1ms" max:"60m" doc:"Moirai: how long a client connection may be idle. A duration or milliseconds, at most 60m. Unset: Moirai's default (55s)."`
	Server  time.Duration `annotation:"timeout-server" unit:"ms" min:"1ms" max:"60m" doc:"Moirai: how long a node may take to answer. A duration or milliseconds, at most 60m. Unset: Moirai's default (120s)."`
	Queue   time.Duration `annotation:"timeout-queue" unit:"ms" min:"1ms" max:"60m" doc:"Moirai: how long a request may wait for a free connection slot. A duration or milliseconds. Unset: Moirai's default."`
}

// Validate checks rules that span annotations. The load-balancer pipeline
// calls it after decoding; a failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	for _, name := range c.CertificateName {
		if !dnsZonePattern.MatchString(strings.ToLower(name)) {
			errs = append(errs, fmt.Errorf("annotation %q: %s is not a DNS name", annotationKey("certificate-name"), annotations.Quote(name)))
		}
	}
	if c.Mode == modeCNS {
		for _, f := range []struct {
			key string
			set bool
		}{
			{"certificate-name", len(c.CertificateName) > 0},
			{"max-backends", c.MaxBackends != 0},
			{"metrics-acl", len(c.MetricsACL) > 0},
			{"package", c.Package != ""},
			{"timeout-*", c.Timeouts != timeoutsConfig{}},
		} {
			if f.set {
				errs = append(errs, fmt.Errorf("annotation %q: only Moirai load balancers have it; remove it, or set %s to moirai", annotationKey(f.key), annotationKey("mode")))
			}
		}
	}
	return errors.Join(errs...)
}

// annotationKey returns the full annotation for a key relative to the
// prefix.
func annotationKey(key string) string { return AnnotationPrefix + key }
