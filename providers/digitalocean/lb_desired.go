package digitalocean

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// This file computes the load balancer a Service asks for, as the full
// godo.LoadBalancerRequest the API's PUT replaces the load balancer with,
// and names what differs from the one the cloud has. It makes no API
// calls, so the tests cover it with plain tables.

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// lbSettings is what desiredRequest needs beyond the Service.
type lbSettings struct {
	region    string
	vpcUUID   string
	clusterID string
	// certificateID is the resolved certificate for TLS-terminating ports
	// (from certificate-id, or looked up from certificate-name).
	certificateID string
	codec         providerid.Codec
	// nodeTag is DO_LB_DROPLET_TAG: the droplet tag load balancers in tag
	// mode target; "" when unset.
	nodeTag string
}

// targetTag is the droplet tag req's load balancer targets, "" when it
// lists droplet IDs instead: the droplet-targets annotation (pre-filled
// from DO_LB_DROPLET_TAG) says which. The driver's Validate refuses tag
// without DO_LB_DROPLET_TAG before this runs.
func targetTag(cfg *LoadBalancerConfig, s lbSettings) string {
	if cfg.DropletTargets == targetsTag {
		return s.nodeTag
	}
	return ""
}

// ownerTag is the tag the existing CCM puts on the load balancers of the
// cluster with DO_CLUSTER_ID; "" without one.
func ownerTag(clusterID string) string {
	if clusterID == "" {
		return ""
	}
	return "k8s:" + clusterID
}

// desiredRequest is the full spec of req's load balancer. current is the
// load balancer as it is (nil on create): settings fixed at creation (VPC,
// region, address) and unset ones (size) are carried over from it, and tags
// someone else added are kept.
func desiredRequest(ctx context.Context, req *lbRequest, s lbSettings, current *godo.LoadBalancer) (*godo.LoadBalancerRequest, error) {
	cfg := req.Config
	rules, err := forwardingRules(req.Service, cfg, s.certificateID)
	if err != nil {
		return nil, err
	}
	hc, err := healthCheck(req.Service, cfg)
	if err != nil {
		return nil, err
	}
	firewall, err := lbFirewall(req.Service, cfg)
	if err != nil {
		return nil, err
	}
	idle := cfg.HTTPIdleTimeout
	r := &godo.LoadBalancerRequest{
		Name:                   req.Name,
		Algorithm:              cfg.Algorithm,
		Region:                 s.region,
		SizeSlug:               cfg.SizeSlug,
		SizeUnit:               cfg.SizeUnit,
		Type:                   cfg.Type,
		ForwardingRules:        rules,
		HealthCheck:            hc,
		StickySessions:         stickySessions(cfg),
		RedirectHttpToHttps:    cfg.RedirectHTTP,
		EnableProxyProtocol:    cfg.ProxyProtocol,
		EnableBackendKeepalive: cfg.BackendKeepalive,
		VPCUUID:                s.vpcUUID,
		VPCSubnetUUID:          cfg.SubnetUUID,
		HTTPIdleTimeoutSeconds: &idle,
		Firewall:               firewall,
		Network:                cfg.Network,
		NetworkStack:           cfg.NetworkStack,
		IP:                     cfg.IP,
		Tags:                   withTag(nil, ownerTag(s.clusterID)),
	}
	// tag and droplet_ids are exclusive: the API refuses both (422).
	if r.Tag = targetTag(cfg, s); r.Tag == "" {
		r.DropletIDs = dropletIDs(ctx, req.Nodes, s.codec)
	}
	if cfg.DisableLetsEncryptDNSRecords != nil {
		v := *cfg.DisableLetsEncryptDNSRecords
		r.DisableLetsEncryptDNSRecords = &v
	}
	if current != nil {
		carryOver(r, current)
	}
	return r, nil
}

// carryOver keeps what the Service does not decide: the region, VPC and
// subnet the load balancer was created in, its size when no annotation
// sets one, the Let's Encrypt DNS setting when unset, and its tags.
func carryOver(r *godo.LoadBalancerRequest, lb *godo.LoadBalancer) {
	if lb.Region != nil && lb.Region.Slug != "" {
		r.Region = lb.Region.Slug
	}
	r.VPCUUID = cmp.Or(lb.VPCUUID, r.VPCUUID)
	r.VPCSubnetUUID = cmp.Or(lb.VPCSubnetUUID, r.VPCSubnetUUID)
	r.IP = "" // create-only
	if r.SizeSlug == "" && r.SizeUnit == 0 {
		r.SizeSlug, r.SizeUnit = lb.SizeSlug, lb.SizeUnit
	}
	if r.DisableLetsEncryptDNSRecords == nil && lb.DisableLetsEncryptDNSRecords != nil {
		v := *lb.DisableLetsEncryptDNSRecords
		r.DisableLetsEncryptDNSRecords = &v
	}
	tags := slices.Clone(lb.Tags)
	for _, t := range r.Tags {
		tags = withTag(tags, t)
	}
	r.Tags = tags
}

// validateService rejects what a DigitalOcean load balancer cannot serve,
// before any API call.
func validateService(req *lbRequest) error {
	// The certificate is resolved later; here only whether one is set counts.
	cert := cmp.Or(req.Config.CertificateID, req.Config.CertificateName)
	if _, err := forwardingRules(req.Service, req.Config, cert); err != nil {
		return err
	}
	if _, err := healthCheck(req.Service, req.Config); err != nil {
		return err
	}
	_, err := lbFirewall(req.Service, req.Config)
	return err
}

// forwardingRules maps each Service port to a rule from the port to its
// NodePort, with the protocol the annotations give it (udp for UDP ports),
// sorted by entry protocol family and port.
func forwardingRules(svc *corev1.Service, cfg *LoadBalancerConfig, certID string) ([]godo.ForwardingRule, error) {
	tlsPorts := cfg.TLSPorts
	if len(tlsPorts) == 0 && (cfg.CertificateID != "" || cfg.CertificateName != "" || cfg.TLSPassthrough) && !slices.Contains(cfg.HTTP2Ports, 443) {
		tlsPorts = []int32{443}
	}
	var rules []godo.ForwardingRule
	for _, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			return nil, fmt.Errorf("port %d has no node port: set spec.allocateLoadBalancerNodePorts to true", p.Port)
		}
		proto := cfg.Protocol
		switch {
		case p.Protocol == corev1.ProtocolUDP:
			proto = protoUDP
		case p.Protocol != "" && p.Protocol != corev1.ProtocolTCP:
			return nil, fmt.Errorf("port %d: protocol %s is not supported by DigitalOcean load balancers (TCP or UDP)", p.Port, p.Protocol)
		case slices.Contains(cfg.HTTPPorts, p.Port):
			proto = protoHTTP
		case slices.Contains(tlsPorts, p.Port):
			proto = protoHTTPS
		case slices.Contains(cfg.HTTP2Ports, p.Port):
			proto = protoHTTP2
		case cfg.HTTP3Port == p.Port:
			proto = protoHTTP3
		}
		r := godo.ForwardingRule{EntryProtocol: proto, EntryPort: int(p.Port), TargetProtocol: proto, TargetPort: int(p.NodePort)}
		switch proto {
		case protoHTTPS, protoHTTP2, protoHTTP3:
			if cfg.TLSPassthrough && proto != protoHTTP3 {
				r.TlsPassthrough = true
			} else {
				if certID == "" {
					return nil, fmt.Errorf("port %d uses %s and needs %s or %s", p.Port, proto, annotationKey("certificate-id"), annotationKey("tls-passthrough"))
				}
				r.CertificateID, r.TargetProtocol = certID, protoHTTP
			}
		}
		if cfg.Type == LoadBalancerTypeRegionalNetwork && proto != protoTCP && proto != protoUDP {
			return nil, fmt.Errorf("port %d: REGIONAL_NETWORK load balancers forward tcp and udp only, not %s", p.Port, proto)
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, errors.New("the Service has no ports")
	}
	sortRules(rules)
	return rules, nil
}

func sortRules(rules []godo.ForwardingRule) {
	slices.SortFunc(rules, func(a, b godo.ForwardingRule) int {
		return cmp.Or(cmp.Compare(udpFirst(a), udpFirst(b)), cmp.Compare(a.EntryPort, b.EntryPort))
	})
}

// udpFirst orders TCP-family rules before UDP ones.
func udpFirst(r godo.ForwardingRule) int {
	if r.EntryProtocol == protoUDP {
		return 1
	}
	return 0
}

// healthCheck probes, by default, what tells whether a node can serve the
// Service: with externalTrafficPolicy Local the Service's
// healthCheckNodePort (only nodes with a ready endpoint pass), otherwise
// kube-proxy's health endpoint. Explicit protocol/port/path annotations are
// honoured (see healthCheckConfig.overridden).
func healthCheck(svc *corev1.Service, cfg *LoadBalancerConfig) (*godo.HealthCheck, error) {
	c := &cfg.HealthCheck
	hc := &godo.HealthCheck{
		CheckIntervalSeconds:   c.IntervalSeconds,
		ResponseTimeoutSeconds: c.TimeoutSeconds,
		UnhealthyThreshold:     c.UnhealthyThreshold,
		HealthyThreshold:       c.HealthyThreshold,
	}
	if !c.overridden() {
		hc.Protocol, hc.Port, hc.Path = protoHTTP, kubeProxyHealthPort, kubeProxyHealthPath
		if path, port := helpers.GetServiceHealthCheckPathPort(svc); path != "" {
			hc.Port, hc.Path = int(port), path
		}
		return hc, nil
	}
	hc.Protocol = cmp.Or(c.Protocol, protoTCP)
	if len(svc.Spec.Ports) > 0 {
		hc.Port = int(svc.Spec.Ports[0].NodePort)
	}
	if c.Port != 0 {
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == c.Port })
		if i < 0 {
			return nil, fmt.Errorf("annotation %q: the Service has no port %d", annotationKey("healthcheck-port"), c.Port)
		}
		if svc.Spec.Ports[i].Protocol == corev1.ProtocolUDP {
			return nil, fmt.Errorf("annotation %q: port %d is UDP; health checks need a TCP port", annotationKey("healthcheck-port"), c.Port)
		}
		hc.Port = int(svc.Spec.Ports[i].NodePort)
	}
	if hc.Protocol != protoTCP {
		hc.Path = cmp.Or(c.Path, "/")
	}
	return hc, nil
}

func stickySessions(cfg *LoadBalancerConfig) *godo.StickySessions {
	if cfg.StickySessionsType != "cookies" {
		return &godo.StickySessions{Type: "none"}
	}
	return &godo.StickySessions{Type: "cookies", CookieName: cfg.StickySessionsCookieName, CookieTtlSeconds: cfg.StickySessionsCookieTTL}
}

// lbFirewall is the load balancer's own firewall: spec.loadBalancerSourceRanges
// as cidr: allow rules when set (they replace allow-rules, as in the
// existing CCM), else the allow-rules annotation; deny-rules in both cases.
// nil when there are no rules.
func lbFirewall(svc *corev1.Service, cfg *LoadBalancerConfig) (*godo.LBFirewall, error) {
	allow := slices.Clone(cfg.AllowRules)
	ranges, err := helpers.GetLoadBalancerSourceRanges(svc)
	if err != nil {
		return nil, fmt.Errorf("spec.loadBalancerSourceRanges: %w", err)
	}
	if !helpers.IsAllowAll(ranges) {
		allow = nil
		for _, cidr := range ranges.StringSlice() {
			allow = append(allow, "cidr:"+cidr)
		}
	}
	deny := slices.Clone(cfg.DenyRules)
	if len(allow) == 0 && len(deny) == 0 {
		return nil, nil
	}
	slices.Sort(allow)
	slices.Sort(deny)
	return &godo.LBFirewall{Allow: allow, Deny: deny}, nil
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

// dropletIDs returns the sorted droplet IDs of nodes. A Node without a
// providerID has not been initialized yet; it joins on a later sync.
func dropletIDs(ctx context.Context, nodes []*corev1.Node, codec providerid.Codec) []int {
	ids := []int{}
	for _, n := range nodes {
		if n.Spec.ProviderID == "" {
			continue
		}
		id, err := codec.Parse(n.Spec.ProviderID)
		var num int
		if err == nil {
			num, err = strconv.Atoi(id.Value)
		}
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer", "node", klog.KObj(n), "providerID", n.Spec.ProviderID, "err", err)
			continue
		}
		ids = append(ids, num)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// withTag returns tags with tag added if it is missing ("" adds nothing).
func withTag(tags []string, tag string) []string {
	if tag == "" || slices.Contains(tags, tag) {
		return tags
	}
	return append(tags, tag)
}
