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
	csitest.CheckSanity(t, res)
}
