package skeleton_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

const clusterName = "test-cluster"

// fixture is the provider initialized against a fresh simulator, the way
// framework.Main would do it, for the instance and route tests (the
// load-balancer tests drive a frameworktest.LBFixture).
type fixture struct {
	sim   *skeletonsim.Server
	cloud *framework.Cloud
	ctx   context.Context
}

// newFixture starts a simulator and the provider on it.
func newFixture(t *testing.T, opts skeletonsim.Options) *fixture {
	t.Helper()
	sim := skeletonsim.NewServer(t, opts)
	vars := map[string]string{
		"SKELETON_API_URL": sim.URL(),
		"SKELETON_TOKEN":   sim.Token(),
		"SKELETON_REGION":  "sk-default",
		"SKELETON_API_QPS": "0", // unlimited: tests should not wait for tokens
	}
	_, ctx := ktesting.NewTestContext(t)
	cloud, err := framework.NewCloud(ctx, skeleton.New(), &framework.Env{
		Client:      fake.NewClientset(),
		Recorder:    record.NewFakeRecorder(100),
		ClusterName: clusterName,
		LookupEnv:   func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		// One attempt each, so a fault is seen as is.
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
		InstanceCacheTTL: -1,
	})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return &fixture{sim: sim, cloud: cloud, ctx: ctx}
}

func TestConfigErrors(t *testing.T) {
	const token = "tok-do-not-print"
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{
			Name: "nothing set",
			Env:  map[string]string{},
			Want: []string{"SKELETON_API_URL: required", "SKELETON_TOKEN: required"},
		},
		{
			Name: "no URL",
			Env:  map[string]string{"SKELETON_TOKEN": token},
			Want: []string{"SKELETON_API_URL: required"},
		},
		{
			Name: "not an http URL",
			Env:  map[string]string{"SKELETON_API_URL": "ftp://files.example", "SKELETON_TOKEN": token},
			Want: []string{"SKELETON_API_URL: ftp://files.example is not an http(s) URL"},
		},
		{
			Name: "bad QPS",
			Env:  map[string]string{"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN": token, "SKELETON_API_QPS": "fast"},
			Want: []string{"SKELETON_API_QPS"},
		},
		{
			Name: "token twice",
			Env: map[string]string{
				"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN": token, "SKELETON_TOKEN_FILE": "/nonexistent",
			},
			Want: []string{"SKELETON_TOKEN and SKELETON_TOKEN_FILE are both set"},
		},
		{
			Name: "token file missing",
			Env:  map[string]string{"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN_FILE": "/nonexistent/token"},
			Want: []string{"SKELETON_TOKEN_FILE", "/nonexistent/token"},
		},
	})
}

func TestInitChecksAccess(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Token: "the-right-token"})
	down := skeletonsim.NewServer(t, skeletonsim.Options{})
	down.Close()
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{
			Name: "wrong token",
			Env:  map[string]string{"SKELETON_API_URL": sim.URL(), "SKELETON_TOKEN": "a-wrong-token"},
			Want: []string{"rejected the token"},
		},
		{
			Name: "unreachable API",
			Env:  map[string]string{"SKELETON_API_URL": down.URL(), "SKELETON_TOKEN": "a-wrong-token"},
			Want: []string{"cannot use the Skeleton API at SKELETON_API_URL"},
		},
		{
			Name: "wrong base path",
			Env:  map[string]string{"SKELETON_API_URL": sim.URL() + "/api", "SKELETON_TOKEN": "the-right-token"},
			Want: []string{"cannot use the Skeleton API at SKELETON_API_URL"},
		},
	})
}

func newProvider() framework.Provider { return skeleton.New() }

// TestTokenRotation rotates the token in SKELETON_TOKEN_FILE the way the
// kubelet updates a Secret volume and expects the very next request to use
// it, with no restart.
func TestTokenRotation(t *testing.T) {
	frameworktest.RunSecretRotation(t, harness, "SKELETON_TOKEN")
}

// TestConfigTags catches a config struct tag that package config cannot
// honour, and pins the settings operators rely on.
func TestConfigTags(t *testing.T) {
	frameworktest.CheckSettings(t, skeleton.New(), []string{
		`SKELETON_API_URL string required=true default=""`,
		`SKELETON_TOKEN secret required=true default=""`,
		`SKELETON_REGION string required=false default=""`,
		`SKELETON_API_QPS float64 required=false default="10"`,
	})
}
