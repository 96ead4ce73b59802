// Package csitest is the test kit for framework/csi drivers:
//
//   - RunSanity runs csi-sanity (csi-test v5) against a provider and its
//     simulated cloud, in mount and block access modes, with the node
//     side on real devices: the simulator's Hypervisor is a
//     LoopHypervisor, which backs each volume with a sparse file and,
//     while it is attached, a loop device linked under the cloud's own
//     by-id name, so the driver's real node code formats, mounts, binds
//     and grows real filesystems;
//   - InMountNamespace runs a test's body in a child process in a private
//     mount namespace, for tests of one's own on real devices;
//     StartDriver serves a driver for a test, with clients;
//   - FakeCloud is an in-memory cloud and its provider, with every
//     optional capability, which the kit's own tests run on.
//
// Tests on loop devices need root, /dev/loop-control, util-linux and
// e2fsprogs (xfsprogs for xfs); elsewhere they skip, saying why, or fail
// when CCMKIT_REQUIRE_LOOP=1 (as CI sets it).
//
// A provider's test, with its simulator taking the hypervisor:
//
//	func TestSanity(t *testing.T) {
//		csitest.RunSanity(t, csitest.Options{
//			Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csi.Provider {
//				sim := dosim.NewServer(dosim.Options{Hypervisor: hv})
//				t.Cleanup(sim.Close)
//				return digitalocean.NewCSI(sim.URL, "token")
//			},
//		})
//	}
package csitest
