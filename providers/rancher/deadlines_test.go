package rancher_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// go-rancher takes no context: these tests show that the provider's
// deadlines still end its calls, and that a call made without a context
// (the typed client's) ends at the per-request bound.

// A hung Cattle API at start-up: Init ends at --cloud-init-timeout with an
// error naming it, though each request alone would be allowed far longer.
func TestInitTimeoutBoundsAHungCattleAPI(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	defer sim.Inject(simkit.Fault{Op: "GET /v2-beta/projects/{project}", Delay: time.Hour})()
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	start := time.Now()
	_, err := framework.NewCloud(ctx, rancher.New(), &framework.Env{
		LookupEnv:   func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		InitTimeout: 500 * time.Millisecond,
		CloudAPI:    cloudapi.Options{Timeout: 5 * time.Second},
	})
	if err == nil || !strings.Contains(err.Error(), "--cloud-init-timeout=500ms") {
		t.Fatalf("NewCloud = %v; want an error naming --cloud-init-timeout", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("NewCloud took %s with a 500ms start-up deadline", elapsed)
	}
}

// A hung host list: InstanceExists ends at --instance-lookup-timeout with
// an error, never "the host is gone".
func TestInstanceLookupTimeoutBoundsAHungCattleAPI(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	uuid := sim.Cloud().AddInstance("node-1")
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	cloud, err := framework.NewCloud(ctx, rancher.New(), &framework.Env{
		LookupEnv:             func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		InstanceLookupTimeout: 500 * time.Millisecond,
		InstanceCacheTTL:      -1,
		CloudAPI:              cloudapi.Options{Timeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	defer sim.Inject(simkit.Fault{Op: opListHosts, Delay: time.Hour})()
	start := time.Now()
	for _, n := range []string{"rancher://" + uuid, ""} {
		if exists, err := inst.InstanceExists(ctx, node("node-1", n)); err == nil {
			t.Errorf("InstanceExists(%q) = %v, nil; want an error", n, exists)
		}
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("two lookups took %s with a 500ms lookup deadline", elapsed)
	}
}

// A hung request made through go-rancher's typed client, which has no
// context: it ends at the framework's per-request bound (the cloudapi
// Budget, here twice a 300ms attempt timeout) with an error.
func TestTypedCallBoundedByTheRequestTimeout(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	p := rancher.New()
	if _, err := framework.NewCloud(ctx, p, &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{Timeout: 300 * time.Millisecond},
	}); err != nil {
		t.Fatal(err)
	}
	defer sim.Inject(simkit.Fault{Op: opListHosts, Delay: time.Hour})()
	start := time.Now()
	if _, err := p.APIClient().Host.List(nil); err == nil {
		t.Error("Host.List succeeded against a hung API")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a hung typed call took %s; want it ended near 600ms", elapsed)
	}
}
