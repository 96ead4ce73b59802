package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
	"github.com/ccmkit/ccmkit/internal/soak"
)

// testSoak is the short soak (`make soak` is the long one), on the
// provider's shared control plane: about 60 random operations with 10% of
// the cloud's requests failing 5xx, 429 storms, latency spikes, 401
// windows and 5 leader kills, then no invariant broken within 60 s of the
// faults stopping.
func testSoak(t *testing.T, p cluster.Provider) {
	budget := 60 * time.Second
	start := time.Now()
	res, err := soak.Run(t.Context(), soak.Config{
		Provider: p, Seed: 1, Ops: 60, Kills: 5, Rate5xx: 0.1, Converge: budget, Stable: 3 * time.Second,
		Plane: planes.get(t, p), WorkDir: t.TempDir(),
		Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	soak.PrintTable(&table, []*soak.Result{res})
	t.Logf("soak of %s in %s:%s", p.Name, time.Since(start).Round(time.Second), table.String())
	if res.Failed(budget) {
		dumpLogs(t, res.WorkDir)
		t.Fatalf("%d violations; converged: %v after %.1fs (budget %s)", len(res.Violations), res.Converged, res.ConvergeSeconds, budget)
	}
}
