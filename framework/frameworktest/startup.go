package frameworktest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
)

// StartupFailure is a start-up the provider must refuse, for
// RunStartupFailures.
type StartupFailure struct {
	Name string
	// Env holds the environment variables the provider's config reads.
	Env map[string]string
	// CloudConfig is the --cloud-config file content, "" for none.
	CloudConfig string
	// Want are what the error must mention, e.g. the setting at fault.
	Want []string
	// Secrets are credentials the error must not reveal besides those in
	// Env, e.g. ones in CloudConfig.
	Secrets []string
}

// RunStartupFailures runs one subtest per failure: framework.NewCloud, as
// framework.Main runs it at start-up, must refuse a new provider with the
// failure's settings, with an error that mentions all of Want and reveals
// no credential: none of Secrets, and no value Env gives a secret setting
// of the provider's config.
func RunStartupFailures(t *testing.T, newProvider func() framework.Provider, failures []StartupFailure) {
	t.Helper()
	for _, f := range failures {
		t.Run(f.Name, func(t *testing.T) {
			p := newProvider()
			_, ctx := ktesting.NewTestContext(t)
			target := &Target{Provider: p, Env: f.Env, CloudConfig: f.CloudConfig}
			_, err := framework.NewCloud(ctx, p, newEnv(t, target, fake.NewClientset(), record.NewFakeRecorder(100), variant{}))
			if err == nil {
				t.Fatal("NewCloud succeeded, want an error")
			}
			for _, want := range f.Want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			for name, secret := range secrets(t, p, f.Env) {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error reveals %s: %v", name, err)
				}
			}
			for _, secret := range f.Secrets {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error reveals %q: %v", secret, err)
				}
			}
		})
	}
}

// secrets returns the values env gives p's secret settings, by variable.
func secrets(t *testing.T, p framework.Provider, env map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range secretFields(t, p) {
		if v := env[f.Env]; f.Env != "" && v != "" {
			out[f.Env] = v
		}
	}
	return out
}

// secretFields are p's settings of type secret.
func secretFields(t *testing.T, p framework.Provider) []config.Field {
	t.Helper()
	c, ok := p.(framework.Configurable)
	if !ok {
		return nil
	}
	fields, err := config.Fields(c.Config())
	if err != nil {
		t.Fatalf("the provider's config: %v", err)
	}
	return slices.DeleteFunc(fields, func(f config.Field) bool { return f.Type != "secret" })
}

// CheckSettings pins a provider's settings (its config's fields, as
// config.Fields lists them), so that a change to them is deliberate: want
// lists them in order, one `<name> <type> required=<bool> default="<default>"`
// each, the name being the field's environment variable or, for a field
// that has none, its --cloud-config key: e.g. `X_TOKEN secret
// required=true default=""`, `Global.auth-url string required=false
// default=""`. It fails too on a config struct tag that package config
// cannot honour.
func CheckSettings(t *testing.T, c framework.Configurable, want []string) {
	t.Helper()
	fields, err := config.Fields(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fields {
		name := f.Env
		if name == "" {
			name = f.FileKey
		}
		got = append(got, fmt.Sprintf("%s %s required=%v default=%q", name, f.Type, f.Required, f.Default))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}
