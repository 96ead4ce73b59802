package triton_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// TestConformance runs the framework's behavioural contract (providerID
// round trip, not-found semantics, shutdown, listing, and the load
// balancers once the provider has them) against the provider and the
// simulator, with the real triton-go client signing every request. Triton
// has no routes; the suite skips them.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(tritonsim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *tritonsim.Server) *frameworktest.Target {
	return &frameworktest.Target{
		Provider: triton.New(),
		Env:      sim.Env(sim.URL()),
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		InvalidAnnotations: map[string]string{
			triton.AnnotationPrefix + "max-backends": "abc",
		},
		// A machine's tags are the user's: an appliance whose
		// triton.cns.services tag says another name is served (and
		// reported) under that name by CNS.
		OptionalFields: []string{"/tags/triton.cns.services", "/*/tags/triton.cns.services"},
	}
}
