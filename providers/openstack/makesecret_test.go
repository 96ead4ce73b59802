package openstack_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestMakeSecret runs make-secret --cloud-config=<cloud.conf> against the
// simulator (frameworktest.RunMakeSecretSuite): the credentials are
// checked with Keystone, and the file is printed whole as the shipped
// manifests read it.
func TestMakeSecret(t *testing.T) {
	frameworktest.RunMakeSecretSuite(t, frameworktest.MakeSecretCase{
		NewProvider: func() framework.Provider { return openstack.New() },
		Start: func(t *testing.T) (simkit.Cloud, frameworktest.Settings) {
			sim := openstacksim.NewServer(t, openstacksim.Options{})
			return sim.Cloud(), frameworktest.Settings{
				// The few variables the provider reads besides its
				// cloud.conf, unset.
				Env:         map[string]string{"OS_CCM_REGIONAL": "", "OS_CLOUD": "", "OS_CLIENT_CONFIG_FILE": ""},
				CloudConfig: sim.CloudConfig(),
			}
		},
		Manifests:     "../../examples/manifests/openstack",
		Credential:    "password",
		Required:      "auth-url",
		RequiredError: "[Global] auth-url: required",
	})
}
