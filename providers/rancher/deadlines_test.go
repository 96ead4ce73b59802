package rancher_test

import (
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// go-rancher takes no context: these tests show that the provider's
// deadlines still end its calls, and that a call made without a context
// (the typed client's) ends at the per-request bound.

// TestDeadlines: a hung Cattle API is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after
// (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}

// A hung request made through go-rancher's typed client, which has no
// context: it ends at the framework's per-request bound (the cloudapi
// Budget, here twice a 300ms attempt timeout) with an error.
func TestTypedCallBoundedByTheRequestTimeout(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	cloud, _ := frameworktest.StartCloud(t, target(sim), func(env *framework.Env) {
		env.CloudAPI = cloudapi.Options{Timeout: 300 * time.Millisecond}
	})
	p := cloud.Provider().(*rancher.Provider)
	defer sim.Inject(simkit.Fault{Op: opListHosts, Delay: time.Hour})()
	start := time.Now()
	if _, err := p.APIClient().Host.List(nil); err == nil {
		t.Error("Host.List succeeded against a hung API")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a hung typed call took %s; want it ended near 600ms", elapsed)
	}
}
