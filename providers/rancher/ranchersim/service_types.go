package ranchersim

import (
	"maps"
	"slices"
	"time"
)

// Service is a Cattle service of kind loadBalancerService or
// externalService.
type Service struct {
	// ID is "1s<n>".
	ID   string `json:"id"`
	Kind string `json:"kind"` // KindLoadBalancer or KindExternal
	Name string `json:"name"`
	// StackID is the stack the service is in.
	StackID     string `json:"stackId"`
	ExternalID  string `json:"externalId,omitempty"`
	Description string `json:"description,omitempty"`
	// State is the Cattle state (registering, inactive, active,
	// updating-active, upgrading...).
	State string `json:"state"`
	// Scale is how many hosts a load balancer runs on (unless its launch
	// config has the io.rancher.scheduler.global label: every active
	// host); 0 means 1.
	Scale        int           `json:"scale,omitempty"`
	LaunchConfig *LaunchConfig `json:"launchConfig,omitempty"`
	LBConfig     *LBConfig     `json:"lbConfig,omitempty"`
	// ExternalIPAddresses, Hostname and HealthCheck are an external
	// service's targets and their health check.
	ExternalIPAddresses []string     `json:"externalIpAddresses,omitempty"`
	Hostname            string       `json:"hostname,omitempty"`
	HealthCheck         *HealthCheck `json:"healthCheck,omitempty"`
	// Links are the services this one consumes (setservicelinks).
	Links    []ServiceLink  `json:"serviceLinks,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Upgrade is the last upgrade's strategy, with the launch config it
	// replaced (what rollback restores).
	Upgrade *ServiceUpgrade `json:"upgrade,omitempty"`
	Created time.Time       `json:"created"`
	Removed *time.Time      `json:"removed,omitempty"`
}

// LaunchConfig is what a service's containers run: for a load balancer,
// the HAProxy image and the ports it publishes ("80:80/tcp",
// "53:53/udp": public port, container port, protocol).
type LaunchConfig struct {
	ImageUUID   string            `json:"imageUuid,omitempty"`
	Ports       []string          `json:"ports,omitempty"`
	Expose      []string          `json:"expose,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	Kind        string            `json:"kind,omitempty"`
}

// LBConfig is a load balancer's configuration: its port rules, TLS
// certificates, stickiness and extra HAProxy config.
type LBConfig struct {
	PortRules            []PortRule        `json:"portRules"`
	CertificateIDs       []string          `json:"certificateIds,omitempty"`
	DefaultCertificateID string            `json:"defaultCertificateId,omitempty"`
	StickinessPolicy     *StickinessPolicy `json:"stickinessPolicy,omitempty"`
	Config               string            `json:"config,omitempty"`
}

// PortRule routes a load balancer's source port (and, for http, a
// hostname and path) to a service's target port.
type PortRule struct {
	SourcePort  int    `json:"sourcePort"`
	TargetPort  int    `json:"targetPort,omitempty"`
	Protocol    string `json:"protocol"`
	ServiceID   string `json:"serviceId,omitempty"`
	Hostname    string `json:"hostname,omitempty"`
	Path        string `json:"path,omitempty"`
	Priority    int    `json:"priority,omitempty"`
	BackendName string `json:"backendName,omitempty"`
	Selector    string `json:"selector,omitempty"`
}

// StickinessPolicy is a load balancer's cookie stickiness
// (loadBalancerCookieStickinessPolicy).
type StickinessPolicy struct {
	Name     string `json:"name,omitempty"`
	Cookie   string `json:"cookie,omitempty"`
	Domain   string `json:"domain,omitempty"`
	Indirect bool   `json:"indirect,omitempty"`
	Nocache  bool   `json:"nocache,omitempty"`
	Postonly bool   `json:"postonly,omitempty"`
	Mode     string `json:"mode,omitempty"`
}

// StickinessModes are a stickiness policy's modes.
var StickinessModes = []string{"rewrite", "insert", "prefix"}

// HealthCheck is an external service's (instanceHealthCheck).
type HealthCheck struct {
	Port                int    `json:"port"`
	RequestLine         string `json:"requestLine,omitempty"`
	Interval            int    `json:"interval,omitempty"`
	ResponseTimeout     int    `json:"responseTimeout,omitempty"`
	HealthyThreshold    int    `json:"healthyThreshold,omitempty"`
	UnhealthyThreshold  int    `json:"unhealthyThreshold,omitempty"`
	InitializingTimeout int    `json:"initializingTimeout,omitempty"`
	Strategy            string `json:"strategy,omitempty"`
}

// ServiceLink is a link from a service to one it consumes.
type ServiceLink struct {
	ServiceID string `json:"serviceId"`
	Name      string `json:"name,omitempty"`
}

// ServiceUpgrade is an upgrade action's input (in-service strategy only).
type ServiceUpgrade struct {
	InServiceStrategy *InServiceStrategy `json:"inServiceStrategy,omitempty"`
}

// InServiceStrategy replaces a service's launch config in place.
type InServiceStrategy struct {
	LaunchConfig         *LaunchConfig `json:"launchConfig,omitempty"`
	PreviousLaunchConfig *LaunchConfig `json:"previousLaunchConfig,omitempty"`
	StartFirst           bool          `json:"startFirst,omitempty"`
	BatchSize            int           `json:"batchSize,omitempty"`
	IntervalMillis       int           `json:"intervalMillis,omitempty"`
}

func (c *LaunchConfig) clone() *LaunchConfig {
	if c == nil {
		return nil
	}
	d := *c
	d.Ports, d.Expose = slices.Clone(c.Ports), slices.Clone(c.Expose)
	d.Labels, d.Environment = maps.Clone(c.Labels), maps.Clone(c.Environment)
	return &d
}

func (c *LBConfig) clone() *LBConfig {
	if c == nil {
		return nil
	}
	d := *c
	d.PortRules, d.CertificateIDs = slices.Clone(c.PortRules), slices.Clone(c.CertificateIDs)
	if c.StickinessPolicy != nil {
		p := *c.StickinessPolicy
		d.StickinessPolicy = &p
	}
	return &d
}

func (u *ServiceUpgrade) clone() *ServiceUpgrade {
	if u == nil {
		return nil
	}
	d := *u
	if u.InServiceStrategy != nil {
		is := *u.InServiceStrategy
		is.LaunchConfig, is.PreviousLaunchConfig = is.LaunchConfig.clone(), is.PreviousLaunchConfig.clone()
		d.InServiceStrategy = &is
	}
	return &d
}

func (svc *Service) clone() Service {
	c := *svc
	c.LaunchConfig, c.LBConfig, c.Upgrade = svc.LaunchConfig.clone(), svc.LBConfig.clone(), svc.Upgrade.clone()
	c.ExternalIPAddresses, c.Links = slices.Clone(svc.ExternalIPAddresses), slices.Clone(svc.Links)
	c.Metadata = maps.Clone(svc.Metadata)
	c.HealthCheck, c.Removed = clonePtr(svc.HealthCheck), clonePtr(svc.Removed)
	return c
}
