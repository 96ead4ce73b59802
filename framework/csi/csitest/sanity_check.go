package csitest

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"testing"
)

// CheckSanity fails t unless res, a RunSanity result, ran exactly
// accessTypes (none: mount and block, RunSanity's default) and each of
// them passed specs and failed none; it logs why specs were skipped
// (mostly a capability the driver does not have), most skipped first.
func CheckSanity(t testing.TB, res Result, accessTypes ...string) {
	t.Helper()
	if len(accessTypes) == 0 {
		accessTypes = []string{"mount", "block"}
	}
	for _, at := range slices.Sorted(maps.Keys(res.ByAccessType)) {
		if c := res.ByAccessType[at]; c.Passed == 0 || c.Failed > 0 {
			t.Errorf("%s: %+v; want specs passed and none failed", at, c)
		}
	}
	if got, want := slices.Sorted(maps.Keys(res.ByAccessType)), slices.Sorted(slices.Values(accessTypes)); !slices.Equal(got, want) {
		t.Errorf("access types run: %v, want %v", got, want)
	}
	reasons := slices.Collect(maps.Keys(res.SkipReasons))
	slices.SortFunc(reasons, func(a, b string) int { return cmp.Or(res.SkipReasons[b]-res.SkipReasons[a], strings.Compare(a, b)) })
	for _, reason := range reasons {
		t.Logf("skipped %d: %s", res.SkipReasons[reason], reason)
	}
}
