package digitalocean_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestMakeSecret runs make-secret against the simulator
// (frameworktest.RunMakeSecretSuite): the token is checked, and printed as
// the shipped manifests read it.
func TestMakeSecret(t *testing.T) {
	frameworktest.RunMakeSecretSuite(t, frameworktest.MakeSecretCase{
		NewProvider: func() framework.Provider { return digitalocean.New() },
		Start: func(t *testing.T) (simkit.Cloud, frameworktest.Settings) {
			sim := dosim.NewServer(t, dosim.Options{Token: "tok-make-secret-0c1d"})
			return sim.Cloud(), frameworktest.Settings{Env: sim.Env(sim.URL())}
		},
		Manifests: "../../examples/manifests/digitalocean",
		// The API's URL is the simulator's; on a droplet the region is
		// the metadata service's.
		Outside:    []string{"DO_OVERRIDE_URL", "REGION"},
		Credential: "DO_ACCESS_TOKEN",
		Rejected:   "rejected the token",
	})
}
