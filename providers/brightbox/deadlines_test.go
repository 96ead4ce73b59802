package brightbox_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestDeadlines: a hung API is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after
// (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}

// A token that expires while the token endpoint hangs: every lookup, the
// one fetching the token and those waiting for it, ends at
// --instance-lookup-timeout with an error, never "the instance is gone",
// even while a call with a longer deadline holds the token fetch.
func TestInstanceLookupTimeoutBoundsAHungTokenEndpoint(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	id := sim.AddServer(gbsim.CloudServer{}).ID
	cloud, ctx := frameworktest.StartCloud(t, target(sim), func(env *framework.Env) {
		env.InstanceLookupTimeout = 500 * time.Millisecond
		env.CloudAPI = cloudapi.Options{Timeout: 5 * time.Second}
	})
	p := cloud.Provider().(*brightbox.Provider)
	inst, _ := cloud.InstancesV2()
	// The token endpoint hangs (for an hour, or until the client gives
	// up).
	t.Cleanup(sim.Inject(simkit.Fault{Op: "POST /token/", Delay: time.Hour}))
	sim.ExpireTokens()
	var wg sync.WaitGroup
	// A call without a lookup deadline (a load-balancer sync) fetches the
	// token first, and hangs for as long as the transport allows.
	long, cancel := context.WithCancel(ctx)
	defer wg.Wait()
	defer cancel()
	before := sim.TokenRequests()
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		_, _ = p.Instances().InstanceByID(long, id)
	})
	for sim.TokenRequests() == before { // until its token request reaches the endpoint
		select {
		case <-done:
			t.Fatal("the first call ended before its token request")
		default:
			runtime.Gosched()
		}
	}
	start := time.Now()
	var short sync.WaitGroup
	for range 3 {
		short.Go(func() {
			if exists, err := inst.InstanceExists(ctx, frameworktest.Node("x", "brightbox://"+id)); err == nil {
				t.Errorf("InstanceExists = %v, nil; want an error", exists)
			}
		})
	}
	short.Wait()
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("three lookups took %s with a 500ms lookup deadline", elapsed)
	}
}
