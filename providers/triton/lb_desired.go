package triton

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/service/helpers"

	"github.com/ccmkit/ccmkit/framework"
)

// This file computes what a Service asks for: the metadata of its Moirai
// appliance, the firewall rules in front of it, and the CNS entries of its
// nodes. It makes no API calls, so the tests cover it with plain tables.

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// Moirai's metadata keys (triton-moirai src/lib.rs).
const (
	mdLoadBalancer    = "cloud.tritoncompute:loadbalancer"
	mdPortmap         = "cloud.tritoncompute:portmap"
	mdMaxRS           = "cloud.tritoncompute:max_rs"
	mdCertificateName = "cloud.tritoncompute:certificate_name"
	mdMetricsACL      = "cloud.tritoncompute:metrics_acl"
	mdTimeouts        = "cloud.tritoncompute:timeouts"
)

// moiraiKeys are the metadata keys the provider manages on an appliance;
// a key the Service no longer asks for is deleted. Others (set by hand,
// say syslog) are left alone.
var moiraiKeys = []string{mdLoadBalancer, mdPortmap, mdMaxRS, mdCertificateName, mdMetricsACL, mdTimeouts}

// moiraiMetricsPort is the port of the appliance's Prometheus endpoint
// (Moirai's default metrics_port).
const moiraiMetricsPort = 8405

// healthCheckPath is what the appliance requests of kube-proxy's health
// port and of a healthCheckNodePort.
const healthCheckPath = "/healthz"

// maxPort is the highest port Moirai accepts in a portmap.
const maxPort = 65534

// validateService rejects what the Service's mode cannot serve, before any
// API call. Each error names the field.
func validateService(req *lbRequest) error {
	svc := req.Service
	var errs []error
	if svc.Spec.SessionAffinity != "" && svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		errs = append(errs, fmt.Errorf("spec.sessionAffinity: %s is not supported by Triton load balancers (None only; the http listener types keep clients on one node with a cookie)", svc.Spec.SessionAffinity))
	}
	if svc.Spec.LoadBalancerIP != "" {
		errs = append(errs, errors.New("spec.loadBalancerIP: not supported: Triton gives each load balancer the address its network assigns"))
	}
	if len(svc.Spec.Ports) == 0 {
		errs = append(errs, errors.New("spec.ports: the Service has no ports"))
	}
	for i, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			errs = append(errs, fmt.Errorf("spec.ports[%d].protocol: %s is not supported by Triton load balancers (TCP only)", i, p.Protocol))
		}
		if p.NodePort == 0 {
			errs = append(errs, fmt.Errorf("spec.ports[%d].nodePort: port %d has no node port; set spec.allocateLoadBalancerNodePorts to true", i, p.Port))
		}
		if p.Port > maxPort {
			errs = append(errs, fmt.Errorf("spec.ports[%d].port: %d is above %d, the highest port Triton load balancers serve", i, p.Port, maxPort))
		}
	}
	if req.Config.Mode == modeCNS {
		if ranges := sourceRanges(svc); ranges != nil {
			errs = append(errs, fmt.Errorf("spec.loadBalancerSourceRanges: a CNS load balancer cannot enforce them (clients connect to the nodes directly); remove them, or set annotation %q to moirai", annotationKey("mode")))
		}
	}
	return errors.Join(errs...)
}

// sourceRanges are the Service's loadBalancerSourceRanges (or the older
// annotation), nil when they allow every address.
func sourceRanges(svc *corev1.Service) []netip.Prefix {
	nets, err := helpers.GetLoadBalancerSourceRanges(svc)
	if err != nil || helpers.IsAllowAll(nets) {
		return nil
	}
	out := make([]netip.Prefix, 0, len(nets))
	for _, s := range nets.StringSlice() {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return cmp.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// moiraiTarget is where an appliance sends traffic: the nodes' CNS name in
// the private zone, and the port checked on each node.
type moiraiTarget struct {
	// backend is the nodes' CNS name in the private zone.
	backend string
	// nodes is how many nodes the Service has.
	nodes int
	// proxyHealth is kube-proxy's health port.
	proxyHealth int32
}

// desiredMetadata is the Moirai metadata of req's appliance.
func desiredMetadata(req *lbRequest, t moiraiTarget) map[string]string {
	cfg := req.Config
	md := map[string]string{
		mdLoadBalancer: "true",
		mdPortmap:      portmap(req.Service, cfg.ListenerType, t),
		mdMaxRS:        strconv.Itoa(maxRS(cfg.MaxBackends, t.nodes)),
	}
	if len(cfg.CertificateName) > 0 {
		names := make([]string, len(cfg.CertificateName))
		for i, n := range cfg.CertificateName {
			names[i] = strings.ToLower(n)
		}
		md[mdCertificateName] = strings.Join(names, ",")
	}
	if len(cfg.MetricsACL) > 0 {
		acl := make([]string, len(cfg.MetricsACL))
		for i, p := range cfg.MetricsACL {
			acl[i] = p.Masked().String()
		}
		md[mdMetricsACL] = strings.Join(acl, ",")
	}
	if ts := timeouts(&cfg.Timeouts); ts != "" {
		md[mdTimeouts] = ts
	}
	return md
}

// portmap maps each Service port to the nodes' NodePort, with an HTTP check
// of the health port, in port order: "tcp://80:<backend>:30080{check:
// /healthz,port:10256}". The health port is the Service's
// healthCheckNodePort with externalTrafficPolicy Local (only nodes with a
// ready endpoint pass), kube-proxy's otherwise.
func portmap(svc *corev1.Service, listener string, t moiraiTarget) string {
	_, hc := helpers.GetServiceHealthCheckPathPort(svc)
	if hc == 0 {
		hc = t.proxyHealth
	}
	ports := slices.Clone(svc.Spec.Ports)
	slices.SortFunc(ports, func(a, b corev1.ServicePort) int { return cmp.Compare(a.Port, b.Port) })
	entries := make([]string, 0, len(ports))
	for _, p := range ports {
		entries = append(entries, fmt.Sprintf("%s://%d:%s:%d{check:%s,port:%d}", listener, p.Port, t.backend, p.NodePort, healthCheckPath, hc))
	}
	return strings.Join(entries, ",")
}

// maxRS is the appliance's backends per port: the annotation, or the node
// count rounded up to a multiple of minBackends, within Moirai's bounds (it
// clamps to them itself). Rounded, a node joining or leaving rewrites the
// metadata of every appliance only when the count crosses a multiple, not
// each time; the slots a count leaves empty cost HAProxy nothing.
func maxRS(annotated uint, nodes int) int {
	rounded := (nodes + minBackends - 1) / minBackends * minBackends
	n := max(int(annotated), rounded)
	return min(max(n, minBackends), maxBackends)
}

// timeouts renders the timeouts set, in milliseconds, as Moirai reads
// them ("{connect:5000ms,client:60000ms}"); "" when none is.
func timeouts(t *timeoutsConfig) string {
	var parts []string
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"queue", t.Queue}, {"connect", t.Connect}, {"client", t.Client}, {"server", t.Server}} {
		if f.d > 0 {
			parts = append(parts, fmt.Sprintf("%s:%dms", f.name, f.d.Milliseconds()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// maxRuleTargets is how many sources one firewall rule lists: FWAPI takes
// at most 24 in an OR-list; more make more rules.
const maxRuleTargets = 24

// desiredRules are the Cloud Firewall rules in front of an appliance (it
// is created with its firewall on: everything not allowed is blocked):
// the Service ports open to the loadBalancerSourceRanges (any source
// without them), and the metrics port to the metrics ACL.
func desiredRules(svc *corev1.Service, cfg *LoadBalancerConfig, machineID string) []string {
	ports := make([]int32, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Port)
	}
	rules := allowRules(sourceRanges(svc), machineID, ports)
	if len(cfg.MetricsACL) > 0 {
		rules = append(rules, allowRules(cfg.MetricsACL, machineID, []int32{moiraiMetricsPort})...)
	}
	return rules
}

// allowRules are the rules opening ports of the machine to sources (nil:
// any), in FWAPI's own spelling so that what it lists compares equal.
func allowRules(sources []netip.Prefix, machineID string, ports []int32) []string {
	ports = slices.Clone(ports)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	portList := make([]string, len(ports))
	for i, p := range ports {
		portList[i] = "PORT " + strconv.Itoa(int(p))
	}
	to := " TO vm " + machineID + " ALLOW tcp " + orList(portList, " AND ")
	if len(sources) == 0 {
		return []string{"FROM any" + to}
	}
	var rules []string
	for chunk := range slices.Chunk(sources, maxRuleTargets) {
		subnets := make([]string, len(chunk))
		for i, p := range chunk {
			subnets[i] = "subnet " + p.String()
		}
		rules = append(rules, "FROM "+orList(subnets, " OR ")+to)
	}
	return rules
}

// orList joins items with sep, in parentheses when there are several.
func orList(items []string, sep string) string {
	if len(items) == 1 {
		return items[0]
	}
	return "(" + strings.Join(items, sep) + ")"
}
