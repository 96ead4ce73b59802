package openstack

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
)

// This file computes the Octavia tree a Service asks for: listeners keyed
// by protocol and port, each with its default pool, members and health
// monitor. It makes no API calls, so plain tables cover it.

// Octavia provisioning statuses the driver acts on.
const (
	statusActive        = "ACTIVE"
	statusError         = "ERROR"
	statusPendingDelete = "PENDING_DELETE"
	statusPendingUpdate = "PENDING_UPDATE"
	statusDeleted       = "DELETED"
)

const (
	headerXForwardedFor = "X-Forwarded-For"
	// kube-proxy answers on the health check node port at this path.
	healthCheckPath = "/healthz"
	// lbNamePrefix starts OCCM's load balancer names.
	lbNamePrefix = "kube_service_"
	maxNameLen   = 255
)

// octaviaFeatures are what the Octavia API version and provider allow.
type octaviaFeatures struct {
	provider string
	// tags on load balancers and listeners (API 2.5).
	tags bool
	// timeouts on listeners (API 2.1; not with ovn).
	timeouts bool
	// vipACL: allowed_cidrs on listeners (API 2.12).
	vipACL bool
	// flavors (2.6) and availability zones (2.14) at creation.
	flavors, availabilityZones bool
	// httpMonitors: HTTP health monitors (not with ovn); on UDP pools from
	// API 2.16.
	httpMonitors, httpMonitorsOnUDP bool
}

// featuresFor derives the features from the newest API minor version
// Octavia advertises and the [LoadBalancer] lb-provider.
func featuresFor(minor int, provider string) octaviaFeatures {
	ovn := provider == "ovn"
	return octaviaFeatures{
		provider:          provider,
		tags:              minor >= 5,
		timeouts:          minor >= 1 && !ovn,
		vipACL:            minor >= 12,
		flavors:           minor >= 6,
		availabilityZones: minor >= 14,
		httpMonitors:      !ovn,
		httpMonitorsOnUDP: !ovn && minor >= 16,
	}
}

// listenerSpec is one listener the Service asks for, with its pool.
type listenerSpec struct {
	Protocol  string // Octavia listener protocol
	Port      int
	Name      string
	ConnLimit int
	// Timeouts are managed only when the features allow (nil otherwise).
	Timeouts *listenerTimeouts
	// AllowedCIDRs, sorted; nil allows everyone.
	AllowedCIDRs []string
	XFF          bool
	TLSRef       string
	Tags         []string
	Pool         poolSpec
}

type listenerTimeouts struct {
	ClientData, MemberConnect, MemberData, TCPInspect int
}

// key identifies a listener: its protocol and port.
func (l *listenerSpec) key() string { return listenerKey(l.Protocol, l.Port) }

func listenerKey(protocol string, port int) string { return fmt.Sprintf("%s:%d", protocol, port) }

// poolSpec is a listener's default pool.
type poolSpec struct {
	Name     string
	Protocol string
	Method   string
	// Persistence is "SOURCE_IP" for sessionAffinity ClientIP, else "".
	Persistence string
	Members     []memberSpec // sorted by address and port
	Monitor     *monitorSpec // nil: no health monitor
}

// memberSpec is a pool member: a node address and the port's NodePort.
type memberSpec struct {
	Name        string
	Address     string
	Port        int
	SubnetID    string
	MonitorPort int // 0: the member port
}

func (m memberSpec) key() string { return memberKey(m.Address, m.Port) }

func memberKey(addr string, port int) string { return addr + ":" + strconv.Itoa(port) }

// monitorSpec is a pool's health monitor.
type monitorSpec struct {
	Name                               string
	Type                               string
	Delay, Timeout                     int
	MaxRetries, MaxRetriesDown         int
	URLPath, HTTPMethod, ExpectedCodes string
}

// nodeAddrs is a member candidate: a node's name and addresses, and its
// server ID ("" when the Node has no providerID yet).
type nodeAddrs struct {
	name     string
	serverID string
	addrs    []corev1.NodeAddress
}

// treeInput is what desiredListeners needs beyond the Service.
type treeInput struct {
	cfg      *LoadBalancerConfig // with its class applied
	lbName   string
	features octaviaFeatures
	// ipv6: the VIP is IPv6; member addresses and allowed CIDRs follow it.
	ipv6           bool
	memberSubnetID string
	nodes          []nodeAddrs
	createMonitor  bool // [LoadBalancer] create-monitor
}

// desiredListeners is the tree for svc, sorted by listener key.
func desiredListeners(svc *corev1.Service, in treeInput) ([]listenerSpec, error) {
	cfg := in.cfg
	cidrs, err := allowedCIDRs(svc, in.ipv6)
	if err != nil {
		return nil, err
	}
	if !in.features.vipACL {
		cidrs = nil // Validate refused non-trivial ranges already
	}
	members := make([]memberSpec, 0, len(in.nodes))
	for _, n := range in.nodes {
		if addr := memberAddress(n.addrs, in.ipv6); addr != "" {
			members = append(members, memberSpec{Name: n.name, Address: addr, SubnetID: in.memberSubnetID})
		}
	}
	var out []listenerSpec
	for i, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			return nil, fmt.Errorf("port %d has no node port: set spec.allocateLoadBalancerNodePorts to true", p.Port)
		}
		l := listenerSpec{
			Port: int(p.Port), Name: cut255(fmt.Sprintf("listener_%d_%s", i, in.lbName)),
			ConnLimit: cfg.ConnectionLimit, AllowedCIDRs: cidrs,
		}
		switch p.Protocol {
		case corev1.ProtocolTCP, "":
			l.Protocol = "TCP"
			switch {
			case cfg.DefaultTLSContainerRef != "":
				l.Protocol, l.TLSRef = "TERMINATED_HTTPS", cfg.DefaultTLSContainerRef
			case cfg.XForwardedFor:
				l.Protocol = "HTTP"
			}
			l.XFF = cfg.XForwardedFor
		case corev1.ProtocolUDP, corev1.ProtocolSCTP:
			l.Protocol = string(p.Protocol)
		default:
			return nil, fmt.Errorf("port %d: protocol %s is not supported (TCP, UDP or SCTP)", p.Port, p.Protocol)
		}
		if in.features.tags {
			l.Tags = []string{in.lbName}
		}
		if in.features.timeouts {
			l.Timeouts = &listenerTimeouts{cfg.TimeoutClientData, cfg.TimeoutMemberConnect, cfg.TimeoutMemberData, cfg.TimeoutTCPInspect}
		}
		l.Pool = desiredPool(svc, &p, i, l.Protocol, members, in)
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New("the Service has no ports")
	}
	slices.SortFunc(out, func(a, b listenerSpec) int { return cmp.Compare(a.key(), b.key()) })
	return out, nil
}

func desiredPool(svc *corev1.Service, p *corev1.ServicePort, i int, listenerProtocol string, members []memberSpec, in treeInput) poolSpec {
	pool := poolSpec{Name: cut255(fmt.Sprintf("pool_%d_%s", i, in.lbName)), Protocol: listenerProtocol, Method: in.cfg.LBMethod}
	switch listenerProtocol {
	case "HTTP", "TERMINATED_HTTPS":
		pool.Protocol = "HTTP"
	}
	if proxy := in.cfg.proxyPoolProtocol(); proxy != "" && listenerProtocol != "UDP" && listenerProtocol != "SCTP" {
		pool.Protocol = proxy
	}
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		pool.Persistence = "SOURCE_IP"
	}
	mon := desiredMonitor(svc, p, i, in)
	pool.Members = make([]memberSpec, 0, len(members))
	for _, m := range members {
		m.Port = int(p.NodePort)
		if mon != nil && mon.Type == "HTTP" {
			m.MonitorPort = int(svc.Spec.HealthCheckNodePort)
		}
		pool.Members = append(pool.Members, m)
	}
	slices.SortFunc(pool.Members, compareMembers)
	pool.Members = slices.CompactFunc(pool.Members, func(a, b memberSpec) bool { return compareMembers(a, b) == 0 })
	pool.Monitor = mon
	return pool
}

// desiredMonitor is the port's health monitor, nil for none. With
// externalTrafficPolicy Local it probes kube-proxy's /healthz on the
// health check node port, so only nodes with a ready endpoint get traffic;
// it is on by default then.
func desiredMonitor(svc *corev1.Service, p *corev1.ServicePort, i int, in treeInput) *monitorSpec {
	hc := in.cfg.HealthMonitor
	local := helpers.RequestsOnlyLocalTraffic(svc) && svc.Spec.HealthCheckNodePort > 0
	enabled := in.createMonitor || local
	if hc.Enabled != nil {
		enabled = *hc.Enabled
	}
	if !enabled {
		return nil
	}
	m := &monitorSpec{
		Name: cut255(fmt.Sprintf("monitor_%d_%s", i, in.lbName)), Type: string(p.Protocol),
		Delay: wholeSeconds(hc.Delay), Timeout: wholeSeconds(hc.Timeout),
		MaxRetries: int(hc.MaxRetries), MaxRetriesDown: int(hc.MaxRetriesDown),
	}
	switch p.Protocol {
	case corev1.ProtocolUDP:
		m.Type = "UDP-CONNECT"
	case "":
		m.Type = "TCP"
	}
	httpOK := in.features.httpMonitors && (p.Protocol != corev1.ProtocolUDP || in.features.httpMonitorsOnUDP)
	if local && httpOK {
		m.Type, m.URLPath, m.HTTPMethod, m.ExpectedCodes = "HTTP", healthCheckPath, "GET", "200"
	}
	return m
}

// allowedCIDRs are spec.loadBalancerSourceRanges of the VIP's family,
// sorted; nil when they allow everyone.
func allowedCIDRs(svc *corev1.Service, ipv6 bool) ([]string, error) {
	ranges, err := helpers.GetLoadBalancerSourceRanges(svc)
	if err != nil {
		return nil, fmt.Errorf("spec.loadBalancerSourceRanges: %w", err)
	}
	if helpers.IsAllowAll(ranges) {
		return nil, nil
	}
	var out []string
	for _, c := range ranges.StringSlice() {
		p, err := netip.ParsePrefix(c)
		if err != nil || p.Addr().Is6() != ipv6 {
			continue
		}
		if p.Bits() == 0 {
			return nil, nil // everyone of this family
		}
		out = append(out, p.Masked().String())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("spec.loadBalancerSourceRanges: none is an IPv%s range, the family of the load balancer", map[bool]string{false: "4", true: "6"}[ipv6])
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// memberAddress is the node address a member uses: its InternalIP of the
// VIP's family, else its ExternalIP, as OCCM picks them.
func memberAddress(addrs []corev1.NodeAddress, ipv6 bool) string {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, a := range addrs {
			ip, err := netip.ParseAddr(a.Address)
			if a.Type == t && err == nil && ip.Is6() == ipv6 {
				return ip.String()
			}
		}
	}
	return ""
}

// preferIPv6 reports whether the Service's first IP family is IPv6.
func preferIPv6(svc *corev1.Service) bool {
	return len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
}

// wholeSeconds rounds a duration up to whole seconds, at least 1.
func wholeSeconds(d time.Duration) int {
	s := d.Seconds()
	n := int(s)
	if float64(n) < s {
		n++
	}
	return max(n, 1)
}

// loadBalancerName is OCCM's: kube_service_<cluster>_<namespace>_<name>,
// at most 255 characters.
func loadBalancerName(clusterName string, svc *corev1.Service, _ *LoadBalancerConfig) string {
	return cut255(lbNamePrefix + clusterName + "_" + svc.Namespace + "_" + svc.Name)
}

func cut255(s string) string {
	if len(s) > maxNameLen {
		return s[:maxNameLen]
	}
	return s
}

// isPending reports whether an Octavia provisioning status is PENDING_*.
func isPending(status string) bool { return strings.HasPrefix(status, "PENDING_") }
