package framework

import (
	"errors"
	"fmt"

	cloudprovider "k8s.io/cloud-provider"
)

// ErrNotFound is the error a provider returns (or wraps) when the cloud
// answered authoritatively that a resource does not exist, e.g. an HTTP 404.
// It must never be returned for an ambiguous answer (timeouts, 5xx, 401):
// the framework deletes Nodes whose instance is not found.
var ErrNotFound = errors.New("not found")

// ErrProvisioning is wrapped by errors that mean "the cloud is still working
// on it, ask again later". The load-balancer pipeline turns it into an
// api.RetryError so the service controller requeues without backoff and no
// worker blocks waiting.
var ErrProvisioning = errors.New("cloud resource is provisioning")

// ErrNotImplemented is returned (or wrapped) by optional provider methods the
// cloud cannot support, e.g. ListInstances on a cloud without a list call.
var ErrNotImplemented = errors.New("not implemented")

// NotFound returns an error wrapping ErrNotFound with a message.
func NotFound(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrNotFound)
}

// Provisioning returns an error wrapping ErrProvisioning with a message.
func Provisioning(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrProvisioning)
}

// IsNotFound reports whether err is an authoritative not-found, either ours
// or the upstream cloudprovider.InstanceNotFound.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, cloudprovider.InstanceNotFound)
}

// IsProvisioning reports whether err means the cloud is still provisioning.
func IsProvisioning(err error) bool { return errors.Is(err, ErrProvisioning) }

// ErrLoadBalancerKept is wrapped by a LoadBalancerDriver's Delete that left
// the load balancer in place on purpose (the Service disowned it): the
// pipeline reports the delete done, without a Deleted Event, and keeps the
// load balancer in its shared list.
var ErrLoadBalancerKept = errors.New("load balancer kept")
