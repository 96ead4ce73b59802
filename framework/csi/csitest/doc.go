// Package csitest is the test kit for framework/csi drivers:
//
//   - RunSanity runs csi-sanity (csi-test v5) against a provider and its
//     simulated cloud, in mount and block access modes, with the node
//     side on real devices: the simulator's Hypervisor is a
//     LoopHypervisor, which backs each volume with a sparse file and,
//     while it is attached, a loop device linked under the cloud's own
//     by-id name, so the driver's real node code formats, mounts, binds
//     and grows real filesystems;
//   - RunDataRoundTrip checks what csi-sanity does not, on real ext4 and
//     xfs filesystems: a file written, snapshotted, restored to a larger
//     volume and read back; a volume grown while staged (ext4 without
//     CAP_SYS_RESOURCE at the next stage); a raw block volume written,
//     read and grown; and nothing left behind (volumes, snapshots, loop
//     devices, mounts). A call answered Aborted (the cloud still working)
//     is retried a bounded number of times and counted; a provider adds
//     its own checks of each published volume (RoundTripCloud.Published);
//   - InMountNamespace runs a test's body in a child process in a private
//     mount namespace, for tests of one's own on real devices;
//     StartDriver serves a driver for a test, with clients;
//   - a provider's own tests against its simulator share the rest:
//     StartLogged serves it at -v=10 and checks, when the test ends, that
//     no credential is in its log or in an error the test recorded (Code,
//     CheckRefused, CheckBadCreates, UntilDone); Lifecycle counts the API
//     requests of volumes' lifecycles (DiffStats); ServeUntilListening
//     checks its start-up (settings, credentials); WithFlags parses its
//     binary's flags; CheckSanity judges a RunSanity result;
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
//		res := csitest.RunSanity(t, csitest.Options{
//			Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csi.Provider {
//				sim := dosim.NewServer(dosim.Options{Hypervisor: hv})
//				t.Cleanup(sim.Close)
//				return csidriver.NewWithEnv(map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": "token", "DIGITALOCEAN_API_URL": sim.URL() + "/"})
//			},
//		})
//		csitest.CheckSanity(t, res)
//	}
//
//	func TestDataRoundTrip(t *testing.T) {
//		csitest.RunDataRoundTrip(t, csitest.RoundTripOptions{
//			WantAborted: true, // the cloud's actions are asynchronous
//			Setup: func(t testing.TB, hv *csitest.LoopHypervisor) csitest.RoundTripCloud {
//				sim := dosim.NewServer(dosim.Options{Hypervisor: hv})
//				t.Cleanup(sim.Close)
//				return csitest.RoundTripCloud{Provider: csidriver.NewWithEnv(map[string]string{"DIGITALOCEAN_ACCESS_TOKEN": "token", "DIGITALOCEAN_API_URL": sim.URL() + "/"}),
//					Node: nodeID, Left: func() []string { return leftIn(sim) }}
//			},
//		})
//	}
package csitest
