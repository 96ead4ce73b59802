package main

import (
	"errors"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// simPackage matches the import path of a simulated cloud: a <cloud>sim
// package of a provider or an example.
var simPackage = regexp.MustCompile(`^github\.com/ccmkit/ccmkit/(providers|examples)/.+/[a-z]+sim$`)

// heavy are the import path prefixes no simulated cloud, nor cloudsim,
// may depend on: controller-runtime (envtest), which the control-plane
// helpers of package kubetest bring, and the framework with the
// Kubernetes client and cloud-provider libraries under it, which
// frameworktest brings. A simulator needs simkit alone.
var heavy = []string{
	"sigs.k8s.io/controller-runtime",
	"k8s.io/client-go",
	"k8s.io/cloud-provider",
	"github.com/ccmkit/ccmkit/framework",
}

// light are exceptions to heavy.
var light = []string{"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"}

func isHeavy(dep string) bool {
	under := func(prefix string) bool { return dep == prefix || strings.HasPrefix(dep, prefix+"/") }
	return slices.ContainsFunc(heavy, under) && !slices.ContainsFunc(light, under)
}

// TestSimulatorsStandAlone lists the dependencies of every <cloud>sim
// package and of cloudsim itself: none may depend on a heavy package.
func TestSimulatorsStandAlone(t *testing.T) {
	var sims []string
	for _, p := range goList(t, "{{.ImportPath}}", "github.com/ccmkit/ccmkit/providers/...", "github.com/ccmkit/ccmkit/examples/...") {
		if simPackage.MatchString(p) {
			sims = append(sims, p)
		}
	}
	for _, want := range []string{"dosim", "gbsim", "openstacksim", "skeletonsim"} {
		if !slices.ContainsFunc(sims, func(p string) bool { return path.Base(p) == want }) {
			t.Fatalf("no %s among the simulators found: %v", want, sims)
		}
	}
	// One go list for all: each line is a package and its dependencies.
	lines := goList(t, `{{.ImportPath}} {{join .Deps " "}}`, append(sims, "github.com/ccmkit/ccmkit/cmd/cloudsim")...)
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		var bad []string
		for dep := range strings.FieldsSeq(deps) {
			if isHeavy(dep) {
				bad = append(bad, dep)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s depends on %d heavy packages: %s", pkg, len(bad), strings.Join(bad[:min(len(bad), 8)], ", "))
		}
		t.Logf("%s: %d packages", pkg, len(strings.Fields(deps)))
	}
}

// goList runs `go list -f format` on pkgs and returns the lines it
// prints.
func goList(t *testing.T, format string, pkgs ...string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", append([]string{"list", "-f", format}, pkgs...)...).Output()
	if err != nil {
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			t.Fatalf("go list %v: %v\n%s", pkgs, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
