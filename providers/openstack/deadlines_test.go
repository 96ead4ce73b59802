package openstack_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestDeadlines: a hung Keystone or Nova is bounded by
// --cloud-init-timeout at start-up and by --instance-lookup-timeout after,
// as on every cloud (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}
