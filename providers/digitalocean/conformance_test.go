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
func TestConformance(t *testing.T) {
	frameworktest.RunConformance(t, harness{})
}

// harness connects the conformance suite to a fresh simulated cloud.
type harness struct{}

func (harness) Setup(t *testing.T) *frameworktest.Target {
	sim := dosim.NewServer(t, dosim.Options{})
	return &frameworktest.Target{
		Provider: digitalocean.New(),
		Env:      sim.Env(sim.URL()),
		Cloud:    frameworktest.SimCloud(sim.Cloud()),
		NoZone:   true, // DigitalOcean has regions, no zones
		InvalidAnnotations: map[string]string{
			"service.beta.kubernetes.io/do-loadbalancer-healthcheck-check-interval-seconds": "abc",
		},
	}
}
