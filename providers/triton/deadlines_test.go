package triton_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestDeadlines: a hung CloudAPI is bounded by --cloud-init-timeout at
// start-up and by --instance-lookup-timeout after, with every request
// signed (frameworktest.RunDeadlines).
func TestDeadlines(t *testing.T) {
	frameworktest.RunDeadlines(t, harness)
}
