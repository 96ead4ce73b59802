package openstack

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Service annotations, with the names and meanings of the OpenStack
// cloud-controller-manager (OCCM), so Services move over unchanged. Keys
// under AnnotationPrefix that LoadBalancerConfig does not claim are reported
// as Warning Events; docs/openstack/annotations.md is generated from the
// struct tags.
const (
	AnnotationPrefix = "loadbalancer.openstack.org/"
	// AnnotationLoadBalancerID records the Octavia load balancer's ID on the
	// Service. The CCM writes it after creating one; set it by hand to adopt
	// an existing load balancer.
	AnnotationLoadBalancerID = AnnotationPrefix + "load-balancer-id"
	// AnnotationInternal asks for a load balancer without a floating IP.
	AnnotationInternal = "service.beta.kubernetes.io/openstack-internal-load-balancer"
)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations on every sync over the cluster defaults of [LoadBalancer]
// (see newLBConfig). Every bad annotation is reported at once as a Warning
// Event, and nothing is written to the cloud.
type LoadBalancerConfig struct {
	LoadBalancerID      string `annotation:"load-balancer-id" doc:"ID of the Octavia load balancer, written by the CCM after it creates one. Set it to adopt an existing load balancer instead of creating one (its listeners and pools then follow the Service; it is not deleted with the Service unless its name is the CCM's), or to share another Service's: up to [LoadBalancer] max-shared-lb Services share one, each with its own listeners (tagged with its load balancer name) on ports no other uses, and the same address; the load balancer goes with the last of them, if the CCM made it."`
	Internal            bool   `annotation:"service.beta.kubernetes.io/openstack-internal-load-balancer" doc:"true: no floating IP; the Service gets the VIP address. Always true when [LoadBalancer] internal-lb is set. Switching to true releases the floating IP (unless keep-floatingip)."`
	Class               string `annotation:"class" doc:"Name of a [LoadBalancerClass \"<name>\"] section of the cloud config, whose settings (floating network and subnet, network, subnet, member subnet) replace [LoadBalancer]'s; annotations still win."`
	LoadBalancerAddress string `annotation:"load-balancer-address" doc:"Written by OCCM (the address behind a hostname); accepted and ignored."`
	Hostname            string `annotation:"hostname" doc:"Publish this hostname in the Service status instead of the IP, so that in-cluster clients go through the load balancer (needed with PROXY protocol on old kube-proxies)."`

	FloatingNetworkID  string `annotation:"floating-network-id" doc:"External network of the floating IP. Default: [LoadBalancer] floating-network-id, else the only external network."`
	FloatingSubnetID   string `annotation:"floating-subnet-id" doc:"External subnet of the floating IP. Default: [LoadBalancer] floating-subnet-id."`
	FloatingSubnet     string `annotation:"floating-subnet" doc:"Name of the external subnet of the floating IP: a glob, or a regular expression after ~. The first subnet that has a free address is used."`
	FloatingSubnetTags string `annotation:"floating-subnet-tags" doc:"Comma-separated tags the external subnet of the floating IP carries (all of them)."`
	KeepFloatingIP     bool   `annotation:"keep-floatingip" doc:"Keep the floating IP in the project when the load balancer is deleted or the Service becomes internal. A floating IP named by spec.loadBalancerIP is always kept."`

	SubnetID       string `annotation:"subnet-id" doc:"Subnet of the VIP, used at creation. Default: [LoadBalancer] subnet-id, else the subnet of the first node's address."`
	NetworkID      string `annotation:"network-id" doc:"Network of the VIP, used at creation when no subnet is set."`
	PortID         string `annotation:"port-id" doc:"Existing Neutron port to use as the VIP, used at creation."`
	MemberSubnetID string `annotation:"member-subnet-id" doc:"Subnet of the node addresses the pool members use. Default: [LoadBalancer] member-subnet-id, else the VIP subnet."`

	ConnectionLimit int    `annotation:"connection-limit" min:"-1" default:"-1" doc:"Maximum connections per listener; -1 is unlimited."`
	LBMethod        string `annotation:"lb-method" enum:"ROUND_ROBIN,LEAST_CONNECTIONS,SOURCE_IP,SOURCE_IP_PORT" doc:"Pool algorithm. Default: [LoadBalancer] lb-method (SOURCE_IP_PORT with the ovn provider, which supports nothing else)."`
	ProxyProtocol   string `annotation:"proxy-protocol" enum:"false,true,v1,v2" default:"false" doc:"Send PROXY protocol to the nodes from TCP listeners: true and v1 for version 1, v2 for version 2. The Service status then gets ipMode Proxy (or a hostname with [LoadBalancer] enable-ingress-hostname)."`
	XForwardedFor   bool   `annotation:"x-forwarded-for" doc:"Make TCP listeners HTTP and add an X-Forwarded-For header. Not together with proxy-protocol."`

	TimeoutClientData    int `annotation:"timeout-client-data" min:"0" max:"86400000" default:"50000" doc:"Frontend client inactivity timeout, in milliseconds."`
	TimeoutMemberConnect int `annotation:"timeout-member-connect" min:"0" max:"86400000" default:"5000" doc:"Backend member connection timeout, in milliseconds."`
	TimeoutMemberData    int `annotation:"timeout-member-data" min:"0" max:"86400000" default:"50000" doc:"Backend member inactivity timeout, in milliseconds."`
	TimeoutTCPInspect    int `annotation:"timeout-tcp-inspect" min:"0" max:"86400000" doc:"Time to wait for more TCP packets for content inspection, in milliseconds."`

	FlavorID         string `annotation:"flavor-id" doc:"Octavia flavor, used at creation. Default: [LoadBalancer] flavor-id."`
	AvailabilityZone string `annotation:"availability-zone" doc:"Octavia availability zone, used at creation. Default: [LoadBalancer] availability-zone."`

	HealthMonitor healthMonitorConfig

	DefaultTLSContainerRef string `annotation:"default-tls-container-ref" doc:"TLS container (Barbican reference) for TCP ports, which become TERMINATED_HTTPS listeners with HTTP pools. Default: [LoadBalancer] default-tls-container-ref."`
	NodeSelector           string `annotation:"node-selector" doc:"Comma-separated key=value labels a node must carry to be a member; a key alone means any value. Default: [LoadBalancer] node-selector."`
}

// healthMonitorConfig groups the health-monitor annotations.
type healthMonitorConfig struct {
	// Enabled is a tri-state: nil means [LoadBalancer] create-monitor, or
	// on for externalTrafficPolicy Local.
	Enabled        *bool         `annotation:"enable-health-monitor" doc:"Create health monitors. Default: [LoadBalancer] create-monitor, and always on for externalTrafficPolicy Local (without one, nodes with no local endpoint still get traffic, OCCM issue 2866); false turns it off even then."`
	Delay          time.Duration `annotation:"health-monitor-delay" unit:"s" min:"1s" doc:"Interval between checks, in seconds. Default: [LoadBalancer] monitor-delay."`
	Timeout        time.Duration `annotation:"health-monitor-timeout" unit:"s" min:"1s" doc:"Timeout of a check, in seconds; at most the delay. Default: [LoadBalancer] monitor-timeout."`
	MaxRetries     uint          `annotation:"health-monitor-max-retries" min:"1" max:"10" doc:"Successful checks before a member is ONLINE. Default: [LoadBalancer] monitor-max-retries."`
	MaxRetriesDown uint          `annotation:"health-monitor-max-retries-down" min:"1" max:"10" doc:"Failed checks before a member is ERROR. Default: [LoadBalancer] monitor-max-retries-down."`
}

// newLBConfig returns the annotation struct pre-filled with the cluster's
// [LoadBalancer] defaults, which annotations override.
func newLBConfig(l *LoadBalancerSection) *LoadBalancerConfig {
	return &LoadBalancerConfig{
		FloatingNetworkID:      l.FloatingNetworkID,
		FloatingSubnetID:       l.FloatingSubnetID,
		FloatingSubnet:         l.FloatingSubnet,
		FloatingSubnetTags:     l.FloatingSubnetTags,
		SubnetID:               l.SubnetID,
		NetworkID:              l.NetworkID,
		MemberSubnetID:         l.MemberSubnetID,
		LBMethod:               l.LBMethod,
		FlavorID:               l.FlavorID,
		AvailabilityZone:       l.AvailabilityZone,
		DefaultTLSContainerRef: l.DefaultTLSContainerRef,
		NodeSelector:           l.NodeSelector,
		HealthMonitor: healthMonitorConfig{
			Delay:          l.MonitorDelay,
			Timeout:        l.MonitorTimeout,
			MaxRetries:     l.MonitorMaxRetries,
			MaxRetriesDown: l.MonitorMaxRetriesDown,
		},
	}
}

// Validate checks rules that span annotations. The load-balancer pipeline
// calls it after decoding; a failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	if c.ProxyProtocol != "false" && c.XForwardedFor {
		errs = append(errs, fmt.Errorf("annotations %q and %q cannot be used together", annotationKey("proxy-protocol"), annotationKey("x-forwarded-for")))
	}
	if hm := &c.HealthMonitor; hm.Timeout > hm.Delay {
		errs = append(errs, fmt.Errorf("annotation %q: %s is longer than the delay %s (%s)",
			annotationKey("health-monitor-timeout"), hm.Timeout, hm.Delay, annotationKey("health-monitor-delay")))
	}
	if _, err := parseNodeSelector(c.NodeSelector); err != nil {
		errs = append(errs, fmt.Errorf("annotation %q: %w", annotationKey("node-selector"), err))
	}
	return errors.Join(errs...)
}

// proxyPoolProtocol is the pool protocol proxy-protocol asks for, "" for
// none.
func (c *LoadBalancerConfig) proxyPoolProtocol() string {
	switch c.ProxyProtocol {
	case "true", "v1":
		return "PROXY"
	case "v2":
		return "PROXYV2"
	}
	return ""
}

// annotationKey returns the full annotation for a key relative to the
// prefix.
func annotationKey(key string) string { return AnnotationPrefix + key }

// classFields are the settings a [LoadBalancerClass] section may set, with
// the annotation that wins over it.
func classFields(cfg *LoadBalancerConfig, class *LoadBalancerClassSection) []struct {
	key  string
	dst  *string
	from string
} {
	return []struct {
		key  string
		dst  *string
		from string
	}{
		{"floating-network-id", &cfg.FloatingNetworkID, class.FloatingNetworkID},
		{"floating-subnet-id", &cfg.FloatingSubnetID, class.FloatingSubnetID},
		{"floating-subnet", &cfg.FloatingSubnet, class.FloatingSubnet},
		{"floating-subnet-tags", &cfg.FloatingSubnetTags, class.FloatingSubnetTags},
		{"network-id", &cfg.NetworkID, class.NetworkID},
		{"subnet-id", &cfg.SubnetID, class.SubnetID},
		{"member-subnet-id", &cfg.MemberSubnetID, class.MemberSubnetID},
	}
}

// withClass returns a copy of cfg with its [LoadBalancerClass] applied:
// each setting the class makes replaces the [LoadBalancer] default unless
// the Service annotates it. An unknown class is an error naming the
// annotation.
func withClass(cfg *LoadBalancerConfig, classes LoadBalancerClasses, svcAnnotations map[string]string) (*LoadBalancerConfig, error) {
	out := *cfg
	if cfg.Class == "" {
		return &out, nil
	}
	class, ok := classes[cfg.Class]
	if !ok || class == nil {
		return nil, fmt.Errorf("annotation %q: the cloud config has no [LoadBalancerClass %s] section", annotationKey("class"), annotations.Quote(cfg.Class))
	}
	for _, f := range classFields(&out, class) {
		if _, set := svcAnnotations[annotationKey(f.key)]; !set && f.from != "" {
			*f.dst = f.from
		}
	}
	return &out, nil
}

// nodeSelector is a parsed node-selector: label key to value, "" meaning
// any value.
type nodeSelector map[string]string

// parseNodeSelector parses "k=v,k2=v2,k3" as OCCM does.
func parseNodeSelector(s string) (nodeSelector, error) {
	sel := nodeSelector{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "" {
			return nil, fmt.Errorf("%s has no label key", annotations.Quote(item))
		}
		sel[k] = v
	}
	return sel, nil
}

// matches reports whether node carries every selected label.
func (sel nodeSelector) matches(node *corev1.Node) bool {
	for k, v := range sel {
		have, ok := node.Labels[k]
		if !ok || v != "" && have != v {
			return false
		}
	}
	return true
}
