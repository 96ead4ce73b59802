package digitalocean_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// hung makes every API call of sim hang (for an hour, or until the client
// gives up).
func hung(t *testing.T, sim *dosim.Server) {
	t.Helper()
	t.Cleanup(sim.Inject(dosim.Fault{Delay: time.Hour}))
}

// cloudWith is the provider on sim with env's deadlines and transport.
func cloudWith(t *testing.T, sim *dosim.Server, env framework.Env) (*framework.Cloud, error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	env.ClusterName = "test-cluster"
	env.LookupEnv = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	return framework.NewCloud(ctx, digitalocean.New(), &env)
}

// A hung API at start-up: Init ends at --cloud-init-timeout with an error
// naming it, though each request alone would be allowed far longer.
func TestInitTimeoutBoundsAHungAPI(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	hung(t, sim)
	start := time.Now()
	_, err := cloudWith(t, sim, framework.Env{
		InitTimeout: 500 * time.Millisecond,
		CloudAPI:    cloudapi.Options{Timeout: 5 * time.Second},
	})
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "--cloud-init-timeout=500ms") {
		t.Fatalf("NewCloud = %v; want an error naming --cloud-init-timeout", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("NewCloud took %s with a 500ms start-up deadline", elapsed)
	}
}

// A hung API after start-up: each InstancesV2 call ends at
// --instance-lookup-timeout with an error, never "the instance is gone",
// through the instance cache and without it.
func TestInstanceLookupTimeoutBoundsAHungAPI(t *testing.T) {
	for _, cacheTTL := range []time.Duration{time.Hour, -1} {
		sim := dosim.NewServer(t, dosim.Options{})
		id := sim.Cloud().AddInstance("node-1")
		cloud, err := cloudWith(t, sim, framework.Env{
			InstanceCacheTTL:      cacheTTL,
			InstanceLookupTimeout: 500 * time.Millisecond,
			CloudAPI:              cloudapi.Options{Timeout: 2 * time.Second, MaxRetries: -1}, // the cache's detached list ends at 2s
		})
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := cloud.InstancesV2()
		hung(t, sim)
		_, ctx := ktesting.NewTestContext(t)
		calls := map[string]func(*corev1.Node) error{
			"InstanceExists":   func(n *corev1.Node) error { _, err := inst.InstanceExists(ctx, n); return err },
			"InstanceShutdown": func(n *corev1.Node) error { _, err := inst.InstanceShutdown(ctx, n); return err },
			"InstanceMetadata": func(n *corev1.Node) error { _, err := inst.InstanceMetadata(ctx, n); return err },
		}
		for name, call := range calls {
			for _, n := range []*corev1.Node{node("node-1", "digitalocean://"+id), node("node-1", "")} {
				start := time.Now()
				err := call(n)
				elapsed := time.Since(start)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("cache TTL %s: %s(providerID %q) = %v; want an error wrapping context.DeadlineExceeded", cacheTTL, name, n.Spec.ProviderID, err)
				}
				if elapsed > 3*time.Second {
					t.Errorf("cache TTL %s: %s(providerID %q) took %s with a 500ms deadline", cacheTTL, name, n.Spec.ProviderID, elapsed)
				}
			}
		}
	}
}

// Without an operation deadline, the transport's budget still bounds each
// request: attempts and waits together.
func TestRequestBudgetBoundsAHungAPI(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	id := sim.Cloud().AddInstance("node-1")
	cloud, err := cloudWith(t, sim, framework.Env{
		InstanceCacheTTL:      -1,
		InstanceLookupTimeout: -1,
		CloudAPI:              cloudapi.Options{Timeout: 200 * time.Millisecond, Budget: 500 * time.Millisecond, MaxRetries: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	hung(t, sim)
	before := sim.Stats()["GET /v2/droplets/{id}"]
	_, ctx := ktesting.NewTestContext(t)
	start := time.Now()
	ok, err := inst.InstanceExists(ctx, node("node-1", "digitalocean://"+id))
	elapsed := time.Since(start)
	if !errors.Is(err, cloudapi.ErrBudgetSpent) {
		t.Errorf("InstanceExists = %v, %v; want an error wrapping cloudapi.ErrBudgetSpent", ok, err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("InstanceExists took %s with a 500ms request budget", elapsed)
	}
	if n := sim.Stats()["GET /v2/droplets/{id}"] - before; n > 3 {
		t.Errorf("%d attempts in a 500ms budget of 200ms attempts, want at most 3", n)
	}
}
