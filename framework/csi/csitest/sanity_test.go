package csitest_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/mount-utils"

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

// TestSanitySharedFilesystems runs csi-sanity on framework/csi with the
// in-memory shared-filesystem cloud, its volumes directories bind-mounted
// for real, and again with them served as NFS exports through the
// NFSStandIn.
func TestSanitySharedFilesystems(t *testing.T) {
	for _, nfs := range []bool{false, true} {
		name := map[bool]string{false: "bind", true: "nfs"}[nfs]
		t.Run(name, func(t *testing.T) {
			var shares *csitest.FakeShares
			var standIn *csitest.NFSStandIn
			opts := csitest.Options{
				Setup: func(t testing.TB, _ *csitest.LoopHypervisor) csi.Provider {
					shares = csitest.NewFakeShares(t.TempDir())
					if nfs {
						shares.NFSServer = "10.0.0.9"
						// The suite runs in a child process (RunSanity):
						// check there, once it is done.
						t.Cleanup(func() {
							if len(standIn.Mounts()) == 0 {
								t.Error("no NFS mount went through the stand-in")
							}
						})
					}
					return shares
				},
			}
			if nfs {
				opts.Mounter = func(_ testing.TB, m mount.Interface) mount.Interface {
					standIn = &csitest.NFSStandIn{Interface: m, Export: func(source string) (string, error) {
						server, dir, _ := strings.Cut(source, ":")
						if server != shares.NFSServer {
							return "", fmt.Errorf("no server %s", server)
						}
						return dir, nil
					}}
					return standIn
				}
			}
			res := csitest.RunSanity(t, opts)
			csitest.CheckSanity(t, res, "mount")
		})
	}
}
