package triton_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// A hung CloudAPI at start-up: Init ends at --cloud-init-timeout with an
// error naming it, though each request alone would be allowed far longer.
func TestInitTimeoutBoundsAHungCloudAPI(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	defer sim.Inject(simkit.Fault{Op: "GET /{account}", Delay: time.Hour})()
	vars := sim.Env(sim.URL())
	start := time.Now()
	_, err := framework.NewCloud(ctx(t), triton.New(), &framework.Env{
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

// A hung machine GET: InstanceExists ends at --instance-lookup-timeout with
// an error, never "the machine is gone".
func TestInstanceLookupTimeoutBoundsAHungCloudAPI(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	id := sim.AddMachine(tritonsim.Machine{Name: "node-1"}).ID
	vars := sim.Env(sim.URL())
	cloud, err := framework.NewCloud(ctx(t), triton.New(), &framework.Env{
		LookupEnv:             func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		InstanceLookupTimeout: 500 * time.Millisecond,
		InstanceCacheTTL:      -1,
		CloudAPI:              cloudapi.Options{Timeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	defer sim.Inject(simkit.Fault{Op: "GET /{account}/machines/{id}", Delay: time.Hour})()
	start := time.Now()
	if exists, err := inst.InstanceExists(ctx(t), node("node-1", "triton://"+id)); err == nil {
		t.Errorf("InstanceExists = %v, nil; want an error", exists)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("the lookup took %s with a 500ms lookup deadline", elapsed)
	}
}
