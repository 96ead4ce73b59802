package brightbox_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestMakeSecret runs make-secret against the simulator
// (frameworktest.RunMakeSecretSuite): the API client's credentials are
// checked over OAuth2, and printed as the shipped manifests read them.
func TestMakeSecret(t *testing.T) {
	frameworktest.RunMakeSecretSuite(t, frameworktest.MakeSecretCase{
		NewProvider: func() framework.Provider { return brightbox.New() },
		Start: func(t *testing.T) (simkit.Cloud, frameworktest.Settings) {
			sim := gbsim.NewServer(t, gbsim.Options{})
			env := sim.Env(sim.URL())
			env["BRIGHTBOX_ACCOUNT"] = "" // the shipped manifests do not set it: the client's one account
			return sim.Cloud(), frameworktest.Settings{Env: env}
		},
		Manifests:  "../../examples/manifests/brightbox",
		Credential: "BRIGHTBOX_CLIENT_SECRET",
	})
}
