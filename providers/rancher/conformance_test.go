package rancher_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestConformance runs the framework's behavioural contract (providerID
// round trip, not-found semantics, shutdown, listing, idempotent load
// balancers with zero writes on a no-op, invalid annotations) against the
// provider and the simulator, with the real go-rancher client. Cattle has
// no route API; the suite skips routes.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(ranchersim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *ranchersim.Server) *frameworktest.Target {
	return &frameworktest.Target{
		Provider: rancher.New(),
		Env:      sim.Env(sim.URL()),
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		InvalidAnnotations: map[string]string{
			rancher.AnnotationPrefix + "healthcheck-interval": "abc",
		},
		// A host's labels are the user's: one dropped or emptied is a
		// host without it (its region or zone), not half an answer. A
		// load balancer lists no public endpoint until its HAProxy
		// containers run: no address yet.
		OptionalFields: []string{"/data/*/labels", "/data/*/labels/*", "/labels", "/labels/*", "/publicEndpoints", "/data/*/publicEndpoints"},
	}
}
