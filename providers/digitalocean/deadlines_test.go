package digitalocean_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestDeadlines: a hung API is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after
// (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}

// Without an operation deadline, the transport's budget still bounds each
// request: attempts and waits together.
func TestRequestBudgetBoundsAHungAPI(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	target := target(sim)
	id := target.Cloud.AddInstance("node-1")
	cloud, ctx := frameworktest.StartCloud(t, target, func(env *framework.Env) {
		env.InstanceLookupTimeout = -1
		env.CloudAPI = cloudapi.Options{Timeout: 200 * time.Millisecond, Budget: 500 * time.Millisecond, MaxRetries: 10}
	})
	inst, _ := cloud.InstancesV2()
	t.Cleanup(sim.Inject(dosim.Fault{Delay: time.Hour})) // every call hangs
	before := sim.Stats()["GET /v2/droplets/{id}"]
	start := time.Now()
	ok, err := inst.InstanceExists(ctx, frameworktest.Node("node-1", "digitalocean://"+id))
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
