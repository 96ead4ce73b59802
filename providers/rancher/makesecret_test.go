package rancher_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestMakeSecret runs make-secret against the simulator
// (frameworktest.RunMakeSecretSuite): the API key is checked with Cattle,
// and printed as the shipped manifests read it.
func TestMakeSecret(t *testing.T) {
	frameworktest.RunMakeSecretSuite(t, frameworktest.MakeSecretCase{
		NewProvider: func() framework.Provider { return rancher.New() },
		Start: func(t *testing.T) (simkit.Cloud, frameworktest.Settings) {
			sim := ranchersim.NewServer(t, ranchersim.Options{})
			return sim.Cloud(), frameworktest.Settings{Env: sim.Env(sim.URL())}
		},
		Manifests:  "../../examples/manifests/rancher",
		Credential: "CATTLE_SECRET_KEY",
	})
}
