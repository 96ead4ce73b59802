package digitalocean_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestConformance runs the framework's behavioural contract (providerID
// round trip, not-found semantics, shutdown, listing, idempotent load
// balancers with zero writes on a no-op, invalid annotations) against the
// provider and the simulator. DigitalOcean has no routes; the suite skips
// them.
func TestConformance(t *testing.T) { frameworktest.RunConformance(t, harness) }

// harness starts a fresh simulated cloud for the framework's suites.
var harness = frameworktest.SimHarness(dosim.NewServer, target)

// target is the provider wired to sim, for the suites and the
// load-balancer fixture.
func target(sim *dosim.Server) *frameworktest.Target {
	return &frameworktest.Target{
		Provider: digitalocean.New(),
		Env:      sim.Env(sim.URL()),
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		NoZone:   true, // DigitalOcean has regions, no zones
		InvalidAnnotations: map[string]string{
			digitalocean.AnnotationPrefix + "healthcheck-check-interval-seconds": "abc",
		},
	}
}

// TestConformanceTagMode runs the suite with DO_LB_DROPLET_TAG set: load
// balancers target the droplet tag, and node churn changes the tag's
// droplets instead of the load balancers.
func TestConformanceTagMode(t *testing.T) {
	frameworktest.RunConformance(t, frameworktest.SimHarness(dosim.NewServer, func(sim *dosim.Server) *frameworktest.Target {
		tg := target(sim)
		tg.Env["DO_LB_DROPLET_TAG"] = "k8s-conformance-lb-nodes"
		return tg
	}))
}
