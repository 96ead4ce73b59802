package csitest_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

// TestSanity runs csi-sanity on framework/csi with the in-memory cloud,
// its volumes real loop devices, in mount and block access modes.
func TestSanity(t *testing.T) {
	res := csitest.RunSanity(t, csitest.Options{
		Setup: func(_ testing.TB, hv *csitest.LoopHypervisor) csi.Provider { return csitest.NewFakeCloud(hv) },
	})
	for at, c := range res.ByAccessType {
		if c.Passed == 0 || c.Failed > 0 {
			t.Errorf("%s: %+v", at, c)
		}
	}
	for reason, n := range res.SkipReasons {
		t.Logf("skipped %d: %s", n, reason)
	}
	if len(res.ByAccessType) != 2 {
		t.Errorf("access types run: %v, want mount and block", res.ByAccessType)
	}
}
