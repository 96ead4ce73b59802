package frameworktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

func TestFakeProviderConforms(t *testing.T) {
	frameworktest.RunConformance(t, frameworktest.FakeHarness{})
}

// brokenProviders each break one rule; the suite must fail for every one,
// naming the rule.
var brokenProviders = map[string]struct {
	broken frameworktest.Broken
	want   string
}{
	"write-on-noop":            {frameworktest.Broken{WriteOnNoop: true}, "with nothing changed made 1 cloud writes, want 0"},
	"not-found-on-error":       {frameworktest.Broken{NotFoundOnError: true}, "want an error (only an authoritative not-found may say false)"},
	"listeners-on-node-change": {frameworktest.Broken{ListenersOnNodeChange: true}, "a node joining changed more than members"},
	"find-missing-fails":       {frameworktest.Broken{FindMissingFails: true}, "EnsureLoadBalancer"},
	"html-404-as-not-found":    {frameworktest.Broken{NotFoundOnAny404: true}, "InstanceExists during a proxy's HTML 404"},
	"guess-by-name":            {frameworktest.Broken{GuessByName: true}, "want an error, never a guess"},
	"find-never-finds":         {frameworktest.Broken{FindNeverFinds: true}, "cloud holds 2 load balancers"},
	"claims-every-lb":          {frameworktest.Broken{ClaimsEveryLB: true}, "a Service with a copied fake.ccmkit.io/load-balancer-id made"},
}

// TestConformanceCatchesBrokenProviders runs the suite on each broken
// provider in a child test process and checks that it fails for the right
// reason: a suite that cannot fail proves nothing.
func TestConformanceCatchesBrokenProviders(t *testing.T) {
	if os.Getenv("CCMKIT_BROKEN_PROVIDER") != "" {
		t.Skip("running as a child")
	}
	for name, tc := range brokenProviders {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProviderChild$", "-test.v")
			cmd.Env = append(os.Environ(), "CCMKIT_BROKEN_PROVIDER="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("conformance suite passed for a provider that breaks %q:\n%s", name, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("conformance suite failed, but not with %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestBrokenProviderChild(t *testing.T) {
	name := os.Getenv("CCMKIT_BROKEN_PROVIDER")
	if name == "" {
		t.Skip("only run by TestConformanceCatchesBrokenProviders")
	}
	frameworktest.RunConformance(t, frameworktest.FakeHarness{Broken: brokenProviders[name].broken})
}
