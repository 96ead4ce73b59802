package brightbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// This file computes what a Service asks for: the load balancer as the full
// brightbox.LoadBalancerOptions a PUT replaces it with, the servers of the
// shared server group and its rule in the shared firewall policy. It makes no API calls,
// so the tests cover it with plain tables.

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// The firewall rule the existing CCM puts in each load balancer's policy:
// tcp to the node ports from Brightbox's private network, where the load
// balancers connect from.
const (
	ruleProtocol = "tcp"
	ruleSource   = "10.0.0.0/8"
)

// defaultHealthCheckRequest is what an http health check requests unless
// healthcheck-request says otherwise (kube-proxy's and the
// healthCheckNodePort's path).
const defaultHealthCheckRequest = "/healthz"

// loadBalancerName is the existing CCM's name, <service>.<namespace>.<cluster>,
// so that its load balancers (and their cloud IP, server group and firewall
// policy, named alike) are adopted rather than made anew.
func loadBalancerName(clusterName string, svc *corev1.Service, _ *LoadBalancerConfig) string {
	name := cmp.Or(svc.Name, cloudprovider.DefaultLoadBalancerName(svc))
	return name + "." + cmp.Or(svc.Namespace, "default") + "." + clusterName
}

// validateService rejects what a Brightbox load balancer cannot serve, as
// the existing CCM does, before any API call. Each error names the field.
func validateService(req *lbRequest) error {
	svc, cfg := req.Service, req.Config
	var errs []error
	if svc.Spec.SessionAffinity != "" && svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		errs = append(errs, fmt.Errorf("spec.sessionAffinity: %s is not supported by Brightbox load balancers (None only)", svc.Spec.SessionAffinity))
	}
	if svc.Spec.LoadBalancerIP != "" {
		errs = append(errs, fmt.Errorf("spec.loadBalancerIP: not supported; remove it and name the cloud IP in annotation %q", annotationKey("cloudip-allocations")))
	}
	if ranges, err := helpers.GetLoadBalancerSourceRanges(svc); err != nil || !helpers.IsAllowAll(ranges) {
		// The node firewall sees the load balancer, not the client, as the
		// source: nothing can enforce the ranges, so refusing beats
		// silently serving everyone.
		errs = append(errs, errors.New("spec.loadBalancerSourceRanges: not supported by Brightbox load balancers, which cannot filter by source address; remove it"))
	}
	if len(svc.Spec.Ports) == 0 {
		errs = append(errs, errors.New("spec.ports: the Service has no ports"))
	}
	sslPort := false
	for i, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			errs = append(errs, fmt.Errorf("spec.ports[%d].protocol: %s is not supported by Brightbox load balancers (TCP only)", i, p.Protocol))
		}
		if p.NodePort == 0 {
			errs = append(errs, fmt.Errorf("spec.ports[%d].nodePort: port %d has no node port; set spec.allocateLoadBalancerNodePorts to true", i, p.Port))
		}
		sslPort = sslPort || p.Port == standardSSLPort
	}
	if !sslPort && cfg.listenerProtocol() == protoHTTP && (len(cfg.SSLPorts) > 0 || len(cfg.SSLDomains) > 0) {
		errs = append(errs, fmt.Errorf("annotations %q and %q: SSL needs a Service port %d", annotationKey("ssl-ports"), annotationKey("ssl-domains"), standardSSLPort))
	}
	return errors.Join(errs...)
}

// desiredOptions is the full spec of req's load balancer. cip is its cloud
// IP, whose names join the certificate's domains when a listener is https.
// Zero numbers (idle timeout, health-check timings) mean "the API's
// default": they are omitted, and lbChanges does not compare them.
func desiredOptions(ctx context.Context, req *lbRequest, cip *brightbox.CloudIP, codec providerid.Codec) (*brightbox.LoadBalancerOptions, error) {
	cfg := req.Config
	listeners, err := listeners(req.Service, cfg)
	if err != nil {
		return nil, err
	}
	policy, err := balancingpolicy.ParseEnum(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("annotation %q: %w", annotationKey("policy"), err)
	}
	hc, err := healthCheck(req.Service, cfg)
	if err != nil {
		return nil, err
	}
	name := req.Name
	https := slices.ContainsFunc(listeners, func(l brightbox.LoadBalancerListener) bool { return l.Protocol == listenerprotocol.Https })
	domains := []string{}
	if https {
		domains = certificateDomains(cfg, cip)
	}
	return &brightbox.LoadBalancerOptions{
		Name:          &name,
		Nodes:         lbNodes(serverIDs(ctx, req.Nodes, codec)),
		Policy:        policy,
		Listeners:     listeners,
		Healthcheck:   hc,
		Domains:       &domains,
		HTTPSRedirect: &https,
	}, nil
}

// listeners maps each Service port to a listener from the port to its
// NodePort, sorted by port: https for 443 and the ssl-ports (unless the
// protocol is tcp), the listener protocol otherwise.
func listeners(svc *corev1.Service, cfg *LoadBalancerConfig) ([]brightbox.LoadBalancerListener, error) {
	base, err := listenerprotocol.ParseEnum(cfg.listenerProtocol())
	if err != nil {
		return nil, fmt.Errorf("annotation %q: %w", annotationKey("listener-protocol"), err)
	}
	var proxy proxyprotocol.Enum
	if cfg.ListenerProxyProtocol != "" {
		if proxy, err = proxyprotocol.ParseEnum(cfg.ListenerProxyProtocol); err != nil {
			return nil, fmt.Errorf("annotation %q: %w", annotationKey("listener-proxy-protocol"), err)
		}
	}
	out := make([]brightbox.LoadBalancerListener, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		if p.Port <= 0 || p.Port > 65535 || p.NodePort <= 0 || p.NodePort > 65535 {
			return nil, fmt.Errorf("port %d: no node port to forward to", p.Port)
		}
		l := brightbox.LoadBalancerListener{Protocol: base, In: uint16(p.Port), Out: uint16(p.NodePort), Timeout: cfg.ListenerIdleTimeout, ProxyProtocol: proxy}
		if base != listenerprotocol.Tcp && isSSLPort(p, cfg.SSLPorts) {
			l.Protocol = listenerprotocol.Https
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New("the Service has no ports")
	}
	sortListeners(out)
	return out, nil
}

// isSSLPort reports whether p gets an https listener: 443 always, and the
// ports whose number or name ssl-ports lists.
func isSSLPort(p corev1.ServicePort, sslPorts []string) bool {
	return p.Port == standardSSLPort || slices.ContainsFunc(sslPorts, func(s string) bool {
		return s == strconv.Itoa(int(p.Port)) || (p.Name != "" && s == p.Name)
	})
}

func sortListeners(ls []brightbox.LoadBalancerListener) {
	slices.SortFunc(ls, func(a, b brightbox.LoadBalancerListener) int { return cmp.Compare(a.In, b.In) })
}

// healthCheck is the existing CCM's: with externalTrafficPolicy Local, an
// http check of the Service's healthCheckNodePort (only nodes with a ready
// endpoint pass); otherwise a check of the first port's NodePort, tcp when
// the listeners are tcp, else http. healthcheck-protocol and -request
// override the type and the path.
func healthCheck(svc *corev1.Service, cfg *LoadBalancerConfig) (*brightbox.LoadBalancerHealthcheck, error) {
	c := &cfg.HealthCheck
	path, port := helpers.GetServiceHealthCheckPathPort(svc)
	typ := healthchecktype.Http
	if cfg.listenerProtocol() == protoTCP && path == "" {
		typ = healthchecktype.Tcp
	}
	if c.Protocol != "" {
		t, err := healthchecktype.ParseEnum(c.Protocol)
		if err != nil {
			return nil, fmt.Errorf("annotation %q: %w", annotationKey("healthcheck-protocol"), err)
		}
		typ = t
	}
	if port == 0 && len(svc.Spec.Ports) > 0 {
		port = svc.Spec.Ports[0].NodePort
	}
	if port <= 0 || port > 65535 {
		return nil, errors.New("no node port for the health check")
	}
	request := "/"
	if typ == healthchecktype.Http {
		request = cmp.Or(c.Request, path, defaultHealthCheckRequest)
	}
	return &brightbox.LoadBalancerHealthcheck{
		Type: typ, Port: uint16(port), Request: request,
		Interval: c.Interval, Timeout: c.Timeout, ThresholdUp: c.HealthyThreshold, ThresholdDown: c.UnhealthyThreshold,
	}, nil
}

// certificateDomains are the domains of the https listeners' certificate,
// as the existing CCM asks for them: the ssl-domains and the cloud IP's
// fqdn and reverse DNS, sorted, without duplicates.
func certificateDomains(cfg *LoadBalancerConfig, cip *brightbox.CloudIP) []string {
	domains := slices.Clone(cfg.SSLDomains)
	if cip != nil {
		domains = append(domains, cip.Fqdn, cip.ReverseDNS)
	}
	domains = slices.DeleteFunc(domains, func(d string) bool { return d == "" })
	for i := range domains {
		domains[i] = strings.ToLower(domains[i])
	}
	slices.Sort(domains)
	return slices.Compact(domains)
}

// serverIDs returns the sorted server IDs of nodes. A Node without a
// providerID has not been initialized yet; it joins on a later sync.
func serverIDs(ctx context.Context, nodes []*corev1.Node, codec providerid.Codec) []string {
	ids := []string{}
	for _, n := range nodes {
		if n.Spec.ProviderID == "" {
			klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer until it has a providerID", "node", klog.KObj(n))
			continue
		}
		id, err := codec.Parse(n.Spec.ProviderID)
		if err != nil || !isServerID(id.Value) {
			klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer", "node", klog.KObj(n), "providerID", n.Spec.ProviderID, "err", err)
			continue
		}
		ids = append(ids, id.Value)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func lbNodes(ids []string) []brightbox.LoadBalancerNode {
	out := make([]brightbox.LoadBalancerNode, len(ids))
	for i, id := range ids {
		out[i] = brightbox.LoadBalancerNode{Node: id}
	}
	return out
}

// firewallRule is a load balancer's rule in the shared firewall policy
// (the one rule of the existing CCM's policy per load balancer).
type firewallRule struct {
	Protocol, Source, DestinationPort, Description string
}

// desiredRule opens the Service's node ports, and its healthCheckNodePort
// when it has one, to the load balancers, described with the load
// balancer's name, as the existing CCM's rule.
func desiredRule(svc *corev1.Service, name string) firewallRule {
	ports := make([]string, 0, len(svc.Spec.Ports)+1)
	for _, p := range svc.Spec.Ports {
		ports = append(ports, strconv.Itoa(int(p.NodePort)))
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		ports = append(ports, strconv.Itoa(int(svc.Spec.HealthCheckNodePort)))
	}
	return firewallRule{Protocol: ruleProtocol, Source: ruleSource, DestinationPort: strings.Join(ports, ","), Description: name}
}

// rule is r as the API holds it, with this ID.
func (r firewallRule) rule(id string) brightbox.FirewallRule {
	return brightbox.FirewallRule{ID: id, Protocol: r.Protocol, Source: r.Source, DestinationPort: r.DestinationPort, Description: r.Description}
}

func (r firewallRule) options(policyID string) brightbox.FirewallRuleOptions {
	return brightbox.FirewallRuleOptions{
		FirewallPolicy: policyID, Protocol: &r.Protocol, Source: &r.Source,
		DestinationPort: &r.DestinationPort, Description: &r.Description,
	}
}
