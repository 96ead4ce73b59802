package triton_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// start runs the provider's Init, through framework.NewCloud as the CCM
// does, against sim with sim's environment changed by env (a "" value
// unsets a variable). Retries are off, so a refused request fails at once.
func start(t *testing.T, sim *tritonsim.Server, env map[string]string) (*triton.Provider, error) {
	t.Helper()
	vars := maps.Clone(sim.Env(sim.URL()))
	for k, v := range env {
		if v == "" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
	_, ctx := ktesting.NewTestContext(t)
	p := triton.New()
	_, err := framework.NewCloud(ctx, p, &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1},
	})
	return p, err
}

// mustStart is start that fails the test on an error.
func mustStart(t *testing.T, sim *tritonsim.Server, env map[string]string) *triton.Provider {
	t.Helper()
	p, err := start(t, sim, env)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

// wantErr fails the test unless err is an error containing every want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an error mentioning %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func ctx(t *testing.T) context.Context {
	_, c := ktesting.NewTestContext(t)
	return c
}

// Init learns the account and datacenter, and fails on what CloudAPI
// refuses with an error naming the variable to check.
func TestInitFailures(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unknown account", map[string]string{"TRITON_ACCOUNT": "nobody"}, []string{"TRITON_"}},
		{"unreachable", map[string]string{"TRITON_URL": "http://127.0.0.1:1"}, []string{"TRITON_URL: CloudAPI at http://127.0.0.1:1 is unreachable"}},
		{"no URL", map[string]string{"TRITON_URL": ""}, []string{"TRITON_URL: required"}},
		{"no key", map[string]string{"TRITON_KEY_MATERIAL": ""}, []string{"TRITON_KEY_MATERIAL: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := start(t, sim, tt.env)
			wantErr(t, err, tt.want...)
		})
	}
}

// The SDC_* names of triton-go and node-triton work when the TRITON_*
// ones are unset.
func TestInitLegacyVariables(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	env := sim.Env(sim.URL())
	legacy := map[string]string{}
	for k, v := range env {
		legacy[k] = ""
		legacy["SDC_"+strings.TrimPrefix(k, "TRITON_")] = v
	}
	mustStart(t, sim, legacy)
}
