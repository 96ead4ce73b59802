package openstack_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestConformance runs the framework's behavioural contract (providerID
// round trip, not-found semantics, shutdown, listing, routes through the
// simulator's default router, which CloudConfig names) against the
// provider and the simulator. Without a LoadBalancerProvider yet, the suite
// skips those subtests.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(openstacksim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *openstacksim.Server) *frameworktest.Target {
	return &frameworktest.Target{
		Provider:    openstack.New(),
		CloudConfig: sim.CloudConfig(),
		Cloud:       frameworktest.SimCloud(sim.Cloud()),
		InvalidAnnotations: map[string]string{
			openstack.AnnotationPrefix + "health-monitor-delay": "abc",
			openstack.AnnotationPrefix + "class":                "no-such-class",
			openstack.AnnotationPrefix + "lb-method":            "FASTEST",
		},
		// A policy may hide a server's availability zone from its
		// owner: a server without it is one without a zone.
		OptionalFields: []string{"/server/OS-EXT-AZ:availability_zone", "/servers/*/OS-EXT-AZ:availability_zone"},
	}
}
