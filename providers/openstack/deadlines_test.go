package openstack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// A hung Keystone at start-up: Init ends at --cloud-init-timeout, as on
// every cloud, with an error naming it.
func TestInitTimeoutBoundsAHungAPI(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	// Keystone's token request is a POST: the simulator cannot see its
	// client hang up before it reads the body, so the delay must end by
	// itself (the test's Cleanup waits for it).
	t.Cleanup(sim.Inject(openstacksim.Fault{Delay: 5 * time.Second}))
	conf := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(conf, []byte(sim.CloudConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	start := time.Now()
	_, err := framework.NewCloud(ctx, openstack.New(), &framework.Env{
		CloudConfigFile: conf,
		LookupEnv:       func(string) (string, bool) { return "", false },
		InitTimeout:     500 * time.Millisecond,
		CloudAPI:        cloudapi.Options{Timeout: 5 * time.Second},
	})
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "--cloud-init-timeout=500ms") {
		t.Fatalf("NewCloud = %v; want an error naming --cloud-init-timeout", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("NewCloud took %s with a 500ms start-up deadline", elapsed)
	}
}
