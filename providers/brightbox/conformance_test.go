package brightbox_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestConformance runs the framework's behavioural contract (providerID
// round trip, not-found semantics, shutdown, listing, idempotent load
// balancers with zero writes on a no-op, invalid annotations) against the
// provider and the simulator, with the real gobrightbox client over
// OAuth2. Brightbox has no routes; the suite skips them.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(gbsim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *gbsim.Server) *frameworktest.Target {
	return &frameworktest.Target{
		Provider: brightbox.New(),
		Env:      sim.Env(sim.URL()),
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		InvalidAnnotations: map[string]string{
			brightbox.AnnotationPrefix + "healthcheck-timeout": "abc",
		},
	}
}
