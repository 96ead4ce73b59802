package main

import (
	"maps"
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// A simulator is one cloud's simulated API, seeded from a scenario.
type simulator interface {
	// Handler serves the cloud's API and /_sim/*.
	Handler() http.Handler
	// Env returns the environment variables that point the provider's
	// cloud-controller-manager at the simulator served at url.
	Env(url string) map[string]string
}

// simulators builds each provider's simulator from a scenario file's
// content. A provider plugs in with one line: its <cloud>sim package has a
// NewFromScenario(data []byte) (*Server, error) whose Server has Handler
// and Env.
var simulators = map[string]func(scenario []byte, defaults ...simkit.ScenarioDefault) (simulator, error){
	"skeleton":     fromScenario(skeletonsim.NewFromScenario),
	"brightbox":    fromScenario(gbsim.NewFromScenario),
	"digitalocean": fromScenario(dosim.NewFromScenario),
	"openstack":    fromScenario(openstacksim.NewFromScenario),
	"rancher":      fromScenario(ranchersim.NewFromScenario),
	"triton":       fromScenario(tritonsim.NewFromScenario),
}

// defaultProvider serves scenarios that name no provider.
const defaultProvider = "skeleton"

// fromScenario adapts a simulator package's NewFromScenario to the
// simulators table.
func fromScenario[S simulator](newFromScenario func([]byte, ...simkit.ScenarioDefault) (S, error)) func([]byte, ...simkit.ScenarioDefault) (simulator, error) {
	return func(scenario []byte, defaults ...simkit.ScenarioDefault) (simulator, error) {
		sim, err := newFromScenario(scenario, defaults...)
		if err != nil {
			return nil, err
		}
		return sim, nil
	}
}

func providerNames() []string {
	return slices.Sorted(maps.Keys(simulators))
}
