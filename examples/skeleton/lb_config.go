package skeleton

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Service annotations. The prefix is the provider's own: every key under it
// that LoadBalancerConfig does not claim gets a Warning Event (typos), and
// the reference docs are generated from the struct tags below.
const (
	AnnotationPrefix = "skeleton.ccmkit.io/"
	// AnnotationLoadBalancerID records the cloud load balancer's ID on the
	// Service. The CCM writes it after creating the load balancer; set it by
	// hand to adopt an existing one.
	AnnotationLoadBalancerID = AnnotationPrefix + "load-balancer-id"
)

// Values of the enum annotations.
const (
	healthCheckTCP  = "tcp"
	healthCheckHTTP = "http"
)

// LoadBalancerConfig is a Service's load-balancer settings, decoded from its
// annotations by package framework/annotations on every sync. Every bad
// annotation is reported at once, as a Warning Event, and nothing is written
// to the cloud.
type LoadBalancerConfig struct {
	Name                string        `annotation:"name" doc:"Name of the cloud load balancer. Default: <cluster>-<namespace>-<service>."`
	Algorithm           string        `annotation:"algorithm" enum:"round_robin,least_connections" default:"round_robin" doc:"How connections are spread over the nodes."`
	HealthCheckProtocol string        `annotation:"health-check-protocol" enum:"tcp,http" doc:"Protocol of the node health check. Default: tcp; with externalTrafficPolicy Local, always http on the Service's healthCheckNodePort."`
	HealthCheckPath     string        `annotation:"health-check-path" doc:"Path of an http health check; only with health-check-protocol http. Default: /."`
	HealthCheckInterval time.Duration `annotation:"health-check-interval" unit:"s" min:"1s" max:"300s" default:"10s" doc:"Time between health checks, e.g. 15 or 15s."`
	ProxyProtocol       bool          `annotation:"proxy-protocol" doc:"Send PROXY protocol v1 to the nodes; the Service status then gets ipMode Proxy."`
	// LoadBalancerID is written by the CCM (see AnnotationLoadBalancerID).
	// The pipeline reads it itself; the field puts it in the generated
	// annotation reference.
	LoadBalancerID string `annotation:"load-balancer-id" doc:"ID of the cloud load balancer, written by the CCM. Set it to adopt an existing load balancer."`
}

// Validate checks rules that span fields. The load-balancer pipeline calls
// it after decoding, and a failure is reported like a bad annotation.
func (c *LoadBalancerConfig) Validate() error {
	var errs []error
	if len(c.Name) > maxNameLength {
		errs = append(errs, fmt.Errorf("annotation %q: longer than %d characters", AnnotationPrefix+"name", maxNameLength))
	}
	if c.HealthCheckPath != "" {
		if c.HealthCheckProtocol != healthCheckHTTP {
			errs = append(errs, fmt.Errorf("annotation %q needs %q set to %q", AnnotationPrefix+"health-check-path", AnnotationPrefix+"health-check-protocol", healthCheckHTTP))
		}
		if !strings.HasPrefix(c.HealthCheckPath, "/") {
			errs = append(errs, fmt.Errorf("annotation %q: path %s must start with /", AnnotationPrefix+"health-check-path", annotations.Quote(c.HealthCheckPath)))
		}
	}
	if c.HealthCheckInterval%time.Second != 0 {
		errs = append(errs, fmt.Errorf("annotation %q: %s is not a whole number of seconds", AnnotationPrefix+"health-check-interval", c.HealthCheckInterval))
	}
	return errors.Join(errs...)
}
