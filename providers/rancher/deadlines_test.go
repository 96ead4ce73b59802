package rancher_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// Every Cattle call carries its caller's context (internal/cloud): these
// tests show that the provider's deadlines end its calls.

// TestDeadlines: a hung Cattle API is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after
// (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}
