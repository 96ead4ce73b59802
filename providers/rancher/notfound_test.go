package rancher

import (
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// startAPI starts a simulator and the provider on it, and returns the
// provider's Cattle client.
func startAPI(t *testing.T) (*ranchersim.Server, *cloud.API) {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	vars := sim.Env(sim.URL())
	_, ctx := ktesting.NewTestContext(t)
	p := New()
	if _, err := framework.NewCloud(ctx, p, &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	}); err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return sim, p.api
}

// The Cattle client the provider builds (internal/cloud, tested there)
// answers Cattle's own 404 with the framework's not-found, and nothing
// else with it.
func TestCattleNotFoundIsTheFrameworks(t *testing.T) {
	sim, a := startAPI(t)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{Hostname: "node-1"})
	if _, err := cloud.ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, h.ID); err != nil {
		t.Fatalf("ByID(%s): %v; want the host", h.ID, err)
	}
	if _, err := cloud.ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h999"); !a.NotFound(err) || !framework.IsNotFound(err) {
		t.Errorf("ByID(1h999) error %v: want the framework's not-found", err)
	}
	if _, err := cloud.ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h1/../x"); err == nil || framework.IsNotFound(err) {
		t.Errorf("ByID of a path: %v; want an error that is not a not-found", err)
	}
}
