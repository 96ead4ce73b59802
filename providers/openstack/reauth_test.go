package openstack_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestReauthenticationBacksOffInA401Storm: for 150 s every Nova call
// answers 401 although Keystone issues tokens. Each failed lookup would
// request a new token; the backoff (1s doubling to 1m, on an injected
// clock) lets through one at 0, 1, 3, 7, 15, 31, 63 and 123 s. Once the
// APIs accept tokens again, an expired token is renewed at once.
func TestReauthenticationBacksOffInA401Storm(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	id := sim.Cloud().AddInstance("node-1")
	clk := testingclock.NewFakeClock(time.Now())
	_, ctx := ktesting.NewTestContext(t)
	conf := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(conf, []byte(sim.CloudConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	cloud, err := framework.NewCloud(ctx, openstack.NewWithClock(clk), &framework.Env{
		ClusterName:      "test-cluster",
		CloudConfigFile:  conf,
		LookupEnv:        func(string) (string, bool) { return "", false },
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 2 * time.Second},
		InstanceCacheTTL: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	n := node("node-1", "openstack:///"+id)

	issued := sim.TokensIssued()
	remove := sim.Inject(openstacksim.Fault{Op: "* /compute*", Status: 401})
	calls := 0
	for elapsed := time.Duration(0); elapsed < 150*time.Second; elapsed += 250 * time.Millisecond {
		if ok, err := inst.InstanceExists(ctx, n); err == nil {
			t.Fatalf("InstanceExists during the 401 storm = %v, nil; want an error", ok)
		}
		calls++
		clk.Step(250 * time.Millisecond)
	}
	remove()
	if got := sim.TokensIssued() - issued; got != 8 {
		t.Errorf("%d lookups in 150s of 401s requested %d tokens, want 8 (at 0, 1, 3, 7, 15, 31, 63 and 123s)", calls, got)
	}

	if ok, err := inst.InstanceExists(ctx, n); err != nil || !ok {
		t.Fatalf("InstanceExists after the storm = %v, %v; want true", ok, err)
	}
	for range 2 { // tokens accepted again: each expiry is healed at once
		issued = sim.TokensIssued()
		sim.ExpireTokens()
		if ok, err := inst.InstanceExists(ctx, n); err != nil || !ok {
			t.Fatalf("InstanceExists after the token expired = %v, %v; want true", ok, err)
		}
		if got := sim.TokensIssued() - issued; got != 1 {
			t.Errorf("an expired token cost %d token requests, want 1", got)
		}
	}
}
