package triton_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// FuzzResponses runs the provider against its simulator answering one
// request with a mutated body (frameworktest.FuzzResponses).
func FuzzResponses(f *testing.F) { frameworktest.FuzzResponses(f, harness) }
