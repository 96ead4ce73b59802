package skeleton_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestDeadlines: a hung API is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after
// (frameworktest.RunDeadlines). Every provider has this test.
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}
