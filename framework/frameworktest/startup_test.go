package frameworktest_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// settings is a config with a variable, a --cloud-config key and both.
type settings struct {
	Token  config.Secret `env:"X_TOKEN" required:"true"`
	Global struct {
		AuthURL string `json:"auth-url"`
		Region  string `json:"region" env:"X_REGION" default:"r1"`
	} `json:"Global"`
}

func (s *settings) Config() any { return s }

// CheckSettings names a setting by its variable, or by its --cloud-config
// key when it has no variable.
func TestCheckSettings(t *testing.T) {
	frameworktest.CheckSettings(t, &settings{}, []string{
		`X_TOKEN secret required=true default=""`,
		`Global.auth-url string required=false default=""`,
		`X_REGION string required=false default="r1"`,
	})
}
