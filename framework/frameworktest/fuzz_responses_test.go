package frameworktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// FuzzFakeResponses runs FuzzResponses against the fake provider, whose
// cloud fails every call while a mutation is armed: the properties hold,
// and every operation's path runs.
func FuzzFakeResponses(f *testing.F) {
	frameworktest.FuzzResponses(f, frameworktest.FakeHarness{})
}

// TestFuzzResponsesCatchesNotFoundOnError: FuzzResponses fails, in a child
// process, for a provider that takes a bad answer for a deleted instance.
func TestFuzzResponsesCatchesNotFoundOnError(t *testing.T) {
	if os.Getenv("CCMKIT_BROKEN_RESPONSES") != "" {
		t.Skip("running as a child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^FuzzBrokenResponsesChild$", "-test.v")
	cmd.Env = append(os.Environ(), "CCMKIT_BROKEN_RESPONSES=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("FuzzResponses passed for a provider that says not found on any error:\n%s", out)
	}
	if want := "InstanceExists for a running instance with a mutated answer = false, nil"; !strings.Contains(string(out), want) {
		t.Fatalf("FuzzResponses failed, but not with %q:\n%s", want, out)
	}
}

func FuzzBrokenResponsesChild(f *testing.F) {
	if os.Getenv("CCMKIT_BROKEN_RESPONSES") == "" {
		f.Skip("only run by TestFuzzResponsesCatchesNotFoundOnError")
	}
	frameworktest.FuzzResponses(f, frameworktest.FakeHarness{Broken: frameworktest.Broken{NotFoundOnError: true}})
}
