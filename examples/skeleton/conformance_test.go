package skeleton_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestConformance runs the framework's behavioural contract (not-found
// semantics, idempotent load balancers with zero writes on a no-op, routes)
// against the provider and the simulator. Every provider has this test.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(skeletonsim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *skeletonsim.Server) *frameworktest.Target {
	env := sim.Env(sim.URL())
	env["SKELETON_API_QPS"] = "0" // unlimited: the tests wait for the cloud, not for tokens
	return &frameworktest.Target{
		Provider: skeleton.New(),
		Env:      env,
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		InvalidAnnotations: map[string]string{
			skeleton.AnnotationPrefix + "health-check-interval": "abc",
		},
		// An instance's region, zone and addresses may be empty: the API
		// has none for it (SKELETON_REGION stands in for the region).
		OptionalFields: []string{
			"/instance/region", "/instance/zone", "/instance/private_ipv4", "/instance/public_ipv4", "/instance/public_ipv6",
			"/instances/*/region", "/instances/*/zone", "/instances/*/private_ipv4", "/instances/*/public_ipv4", "/instances/*/public_ipv6",
		},
	}
}
