package openstack

import "k8s.io/utils/clock"

// NewWithClock is New with the clock that times re-authentication backoff.
func NewWithClock(c clock.Clock) *Provider { return &Provider{clock: c} }
