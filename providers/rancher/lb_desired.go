package rancher

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// This file computes what a Service asks for: the load-balancer service's
// launchConfig ports and lbConfig, and the external service holding the
// nodes (the one the load balancers share, or for a Service of
// externalTrafficPolicy Local its own). It makes no API calls, so the
// tests cover it with plain tables.

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// healthCheckRequestLine is what the external service's health check asks
// the healthCheckNodePort, in Cattle's request_line form.
const healthCheckRequestLine = `GET "/healthz" "HTTP/1.0"`

// healthCheckStrategy: a failing external address is only taken out of
// the load balancer; there is no container to recreate.
const healthCheckStrategy = "none"

// backendSuffix ends the name of a load balancer's own external service:
// lb-<x>-nodes-<hash of its health check> for a Service of
// externalTrafficPolicy Local (Cattle cannot change an external service's
// health check, so a new one gets a new name and replaces the old), and
// lb-<x>-nodes for the one an earlier ccmkit gave every load balancer,
// which the shared one (lb_shared.go) replaces.
const backendSuffix = "-nodes"

// loadBalancerName is the existing CCM's name, lb-<default load-balancer
// name> (lb-a<the Service's UID without dashes, 32 characters in all>), so
// that its load balancers are adopted.
func loadBalancerName(_ string, svc *corev1.Service, _ *LoadBalancerConfig) string {
	return "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
}

// isBackendOf reports whether an external service's name makes it one of
// the load balancer lbName's.
func isBackendOf(extName, lbName string) bool {
	rest, ok := strings.CutPrefix(extName, lbName+backendSuffix)
	return ok && (rest == "" || strings.HasPrefix(rest, "-"))
}

// desiredLB is a Service's load balancer as Cattle should hold it.
type desiredLB struct {
	// ports are launchConfig.ports, "<port>:<port>/<tcp|udp>", sorted.
	ports []string
	// image is the launchConfig.imageUuid the Service asks for
	// ("docker:<image>"), "" when it leaves the image to the environment.
	image string
	// global is whether the HAProxy containers run on every active host:
	// launchConfig.labels holds labelGlobal "true", else not at all.
	global bool
	// scale is how many containers run it; 0 leaves Cattle's as it is.
	scale int64
	// rules are lbConfig.portRules without serviceId (the backend's ID,
	// known once it exists), sorted.
	rules      []rancher.PortRule
	certs      []string
	stickiness *rancher.LoadBalancerCookieStickinessPolicy
	backend    desiredBackend
}

// desiredBackend is the external service holding the nodes' IPs.
type desiredBackend struct {
	name        string
	ips         []string
	healthCheck *rancher.InstanceHealthCheck
	// shared: the external service every load balancer without a health
	// check uses (lb_shared.go), not one of the load balancer's own.
	shared bool
	// current, for the shared one, computes ips again from the request's
	// Nodes brought up to date (LoadBalancerRequest.CurrentNodes): the
	// sync calls it once it holds the shared service's lock.
	current func(ctx context.Context) ([]string, error)
}

// validateService rejects what a Cattle load balancer cannot serve, before
// any API call. Each error names the field.
func validateService(req *lbRequest) error {
	svc, cfg := req.Service, req.Config
	var errs []error
	if svc.Spec.SessionAffinity != "" && svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		errs = append(errs, fmt.Errorf("spec.sessionAffinity: %s is not supported by Rancher load balancers; use annotation %q for HTTP", svc.Spec.SessionAffinity, annotationKey("stickiness-cookie")))
	}
	if svc.Spec.LoadBalancerIP != "" {
		errs = append(errs, errors.New("spec.loadBalancerIP: not supported: a Rancher load balancer's addresses are those of the hosts its HAProxy containers run on"))
	}
	if ranges, err := helpers.GetLoadBalancerSourceRanges(svc); err != nil || !helpers.IsAllowAll(ranges) {
		errs = append(errs, errors.New("spec.loadBalancerSourceRanges: not supported by Rancher load balancers, which cannot filter by source address"))
	}
	if len(svc.Spec.Ports) == 0 {
		errs = append(errs, errors.New("spec.ports: the Service has no ports"))
	}
	var web, tls bool
	for i, p := range svc.Spec.Ports {
		switch p.Protocol {
		case corev1.ProtocolTCP, "":
			proto := cfg.portProtocol(p.Port, p.Name)
			web = web || proto == protoHTTP || proto == protoHTTPS
			tls = tls || terminatesTLS(proto)
		case corev1.ProtocolUDP:
		default:
			errs = append(errs, fmt.Errorf("spec.ports[%d].protocol: %s is not supported by Rancher load balancers (TCP and UDP only)", i, p.Protocol))
		}
		if p.NodePort == 0 {
			errs = append(errs, fmt.Errorf("spec.ports[%d].nodePort: port %d has no node port; set spec.allocateLoadBalancerNodePorts to true", i, p.Port))
		}
	}
	for _, port := range slices.Sorted(maps.Keys(cfg.PortProtocols)) {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
			return port == strconv.Itoa(int(p.Port)) || port == p.Name && p.Name != ""
		}) {
			errs = append(errs, fmt.Errorf("annotation %q: the Service has no port %s", annotationKey("port-protocols"), port))
		}
	}
	if tls && len(cfg.CertificateIDs) == 0 {
		errs = append(errs, fmt.Errorf("annotation %q: required by the https, tls and sni port rules", annotationKey("certificate-ids")))
	}
	if cfg.StickinessCookie != "" && !web {
		errs = append(errs, fmt.Errorf("annotation %q: stickiness needs an http or https port rule", annotationKey("stickiness-cookie")))
	}
	return errors.Join(errs...)
}

// desired is the full spec of req's load balancer. image is the
// cluster-wide image (RANCHER_LB_IMAGE), "" when unset; hostIPs are the
// agent IPs of the hosts of Nodes without an InternalIP, by host uuid.
func desired(ctx context.Context, req *lbRequest, image string, hostIPs map[string]string) (*desiredLB, error) {
	cfg := req.Config
	want := &desiredLB{certs: slices.Clone(cfg.CertificateIDs), global: cfg.Global, scale: cfg.Scale}
	if img := cmp.Or(cfg.Image, image); img != "" {
		want.image = "docker:" + img
	}
	for _, p := range req.Service.Spec.Ports {
		if p.Port <= 0 || p.Port > 65535 || p.NodePort <= 0 || p.NodePort > 65535 {
			return nil, fmt.Errorf("port %d: no node port to forward to", p.Port)
		}
		proto, portProto := protoUDP, protoUDP
		if p.Protocol != corev1.ProtocolUDP {
			proto, portProto = cfg.portProtocol(p.Port, p.Name), protoTCP
		}
		want.ports = append(want.ports, fmt.Sprintf("%d:%d/%s", p.Port, p.Port, portProto))
		want.rules = append(want.rules, rancher.PortRule{SourcePort: int64(p.Port), TargetPort: int64(p.NodePort), Protocol: proto})
	}
	if len(want.rules) == 0 {
		return nil, errors.New("the Service has no ports")
	}
	slices.Sort(want.ports)
	want.ports = slices.Compact(want.ports)
	sortRules(want.rules)
	if cfg.StickinessCookie != "" {
		want.stickiness = &rancher.LoadBalancerCookieStickinessPolicy{
			Name: "cookie", Cookie: cfg.StickinessCookie, Mode: cmp.Or(cfg.StickinessMode, "insert"), Indirect: true, Nocache: true,
		}
	}
	want.backend = desiredBackend{ips: nodeIPs(ctx, req.Nodes, hostIPs), healthCheck: healthCheck(req.Service, cfg)}
	if want.backend.healthCheck == nil {
		want.backend.name, want.backend.shared = sharedBackendName(req.ClusterName), true
	} else {
		want.backend.name = backendName(req.Name, want.backend.healthCheck)
	}
	return want, nil
}

// healthCheck is the external service's health check: for a Service of
// externalTrafficPolicy Local, its healthCheckNodePort's /healthz, which
// only nodes with a ready endpoint pass; none otherwise.
func healthCheck(svc *corev1.Service, cfg *LoadBalancerConfig) *rancher.InstanceHealthCheck {
	_, port := helpers.GetServiceHealthCheckPathPort(svc)
	if port == 0 {
		return nil
	}
	hc := &cfg.HealthCheck
	return &rancher.InstanceHealthCheck{
		Port: int64(port), RequestLine: healthCheckRequestLine, Strategy: healthCheckStrategy,
		Interval: hc.Interval, ResponseTimeout: hc.ResponseTimeout,
		HealthyThreshold: hc.HealthyThreshold, UnhealthyThreshold: hc.UnhealthyThreshold,
	}
}

// backendName is the name of the load balancer's own external service,
// for its health check: the load balancer's, -nodes and a hash of the
// health check.
func backendName(lbName string, hc *rancher.InstanceHealthCheck) string {
	return lbName + backendSuffix + "-" + healthCheckHash(hc)
}

// healthCheckHash is a short hash of what the CCM sets in a health check.
func healthCheckHash(hc *rancher.InstanceHealthCheck) string {
	b, _ := json.Marshal([]any{hc.Port, hc.RequestLine, hc.Strategy, hc.Interval, hc.ResponseTimeout, hc.HealthyThreshold, hc.UnhealthyThreshold})
	h := fnv.New32a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}

// nodeIPs are the nodes' InternalIPs (the hosts' agentIpAddress, as the
// node controller sets it), sorted and without duplicates. A Node without
// one takes its host's agent IP from hostIPs, by its providerID's uuid;
// one without either joins on a later sync.
func nodeIPs(ctx context.Context, nodes []*corev1.Node, hostIPs map[string]string) []string {
	ips := []string{}
	for _, n := range nodes {
		if ip := internalIP(n); ip != "" {
			ips = append(ips, ip)
		} else if ip := hostIPs[hostUUID(n)]; ip != "" {
			ips = append(ips, ip)
		} else {
			klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer until it has an InternalIP", "node", klog.KObj(n))
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

// internalIP is the Node's first InternalIP, "" when it has none.
func internalIP(n *corev1.Node) string {
	i := slices.IndexFunc(n.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalIP })
	if i < 0 {
		return ""
	}
	return n.Status.Addresses[i].Address
}

// hostUUID is the host uuid of the Node's providerID, rancher://<uuid>;
// "" for any other.
func hostUUID(n *corev1.Node) string {
	uuid, ok := strings.CutPrefix(n.Spec.ProviderID, ProviderName+"://")
	if !ok || strings.Contains(uuid, "/") {
		return ""
	}
	return uuid
}

// labelGlobal is the launch-config label with which Cattle's scheduler
// runs one container of a service on every active host, whatever its
// scale.
const labelGlobal = "io.rancher.scheduler.global"

// launchConfig is the launchConfig of a new load balancer, or of an
// upgrade: have's (the load balancer's current one, nil when creating)
// with want's ports, image and global label, the image kept when want
// leaves it, have's other labels kept.
func launchConfig(have *rancher.LaunchConfig, want *desiredLB, defaultImage string) *rancher.LaunchConfig {
	lc := &rancher.LaunchConfig{}
	if have != nil {
		c := *have
		lc = &c
	}
	lc.Ports = slices.Clone(want.ports)
	lc.ImageUuid = cmp.Or(want.image, lc.ImageUuid, defaultImage)
	lc.Labels = maps.Clone(lc.Labels)
	if want.global {
		if lc.Labels == nil {
			lc.Labels = map[string]any{}
		}
		lc.Labels[labelGlobal] = "true"
	} else {
		delete(lc.Labels, labelGlobal)
	}
	return lc
}

// isGlobal reports whether a launchConfig runs its service on every active
// host.
func isGlobal(lc *rancher.LaunchConfig) bool {
	if lc == nil {
		return false
	}
	v, _ := lc.Labels[labelGlobal].(string)
	return strings.EqualFold(v, "true")
}

// lbConfig is the load balancer's lbConfig with its port rules sent to the
// external service backendID.
func lbConfig(want *desiredLB, backendID string) *rancher.LbConfig {
	c := &rancher.LbConfig{StickinessPolicy: want.stickiness, PortRules: make([]rancher.PortRule, len(want.rules))}
	for i, r := range want.rules {
		r.ServiceId = backendID
		c.PortRules[i] = r
	}
	if len(want.certs) > 0 {
		c.DefaultCertificateId = want.certs[0]
		c.CertificateIds = slices.Clone(want.certs[1:])
	}
	return c
}

func sortRules(rules []rancher.PortRule) {
	slices.SortFunc(rules, func(a, b rancher.PortRule) int {
		return cmp.Or(cmp.Compare(a.SourcePort, b.SourcePort), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.ServiceId, b.ServiceId))
	})
}
