package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// startCluster starts a local cluster for p, stopped (with logs dumped on
// failure) when the test ends.
func startCluster(t *testing.T, p cluster.Provider, sim cluster.SimOptions) *cluster.Cluster {
	t.Helper()
	bin := requireBinaries(t)
	root := filepath.Dir(bin)
	c, err := cluster.Start(t.Context(), cluster.Options{Provider: p, Root: root, BinDir: bin, WorkDir: t.TempDir(), Sim: sim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, c.WorkDir)
		}
		c.Stop()
	})
	return c
}

// requireBinaries returns the directory holding kube-apiserver and etcd. It
// skips the test when they are not built, unless CCMKIT_E2E=required (set
// by `make test`) makes that a failure.
func requireBinaries(t *testing.T) string {
	t.Helper()
	bin, err := kubetest.ControlPlaneBinDir("")
	if err != nil {
		if os.Getenv("CCMKIT_E2E") == "required" {
			t.Fatalf("%v: run `make controlplane`", err)
		}
		t.Skipf("%v: run `make controlplane` (or `make test`) to run the end-to-end suite", err)
	}
	return bin
}

func dumpLogs(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) > 200 {
			lines = lines[len(lines)-200:]
		}
		t.Logf("---- %s (last %d lines) ----\n%s", filepath.Base(l), len(lines), strings.Join(lines, "\n"))
	}
}

// eventually polls cond every 200ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			lastErr = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
	}
}

// consistently checks cond every 500ms for the whole duration.
func consistently(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(t.Context()); err != nil {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func TestE2E(t *testing.T) {
	for _, p := range cluster.Providers {
		t.Run(p.Name, func(t *testing.T) {
			t.Run("NodeInitialization", func(t *testing.T) { testNodeInitialization(t, p) })
			t.Run("NodeLifecycle", func(t *testing.T) { testNodeLifecycle(t, p) })
			t.Run("APIErrorsDoNotDeleteNodes", func(t *testing.T) { testAPIErrorsDoNotDeleteNodes(t, p) })
			lb := func(name string, test func(*testing.T, cluster.Provider)) {
				t.Run(name, func(t *testing.T) {
					if !p.LoadBalancers {
						t.Skip("provider has no load balancers yet")
					}
					test(t, p)
				})
			}
			lb("LoadBalancer", testLoadBalancer)
			lb("ServiceWhileNodesJoin", testServiceWhileNodesJoin)
			lb("LeaderFailover", testLeaderFailover)
			t.Run("Routes", func(t *testing.T) {
				if !p.Routes {
					t.Skip("provider has no routes")
				}
				testRoutes(t, p)
			})
		})
	}
}
