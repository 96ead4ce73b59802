package skeletonsim_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestLatencyIsInjectedAndCounted(t *testing.T) {
	const latency = 20 * time.Millisecond
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Common: simkit.Common{Latency: latency}})
	c := newClient(t, sim)

	start := time.Now()
	c.do("GET", "/v1/instances", nil)
	if elapsed := time.Since(start); elapsed < latency {
		t.Errorf("request took %v, want at least the %v latency", elapsed, latency)
	}
	c.do("GET", "/_sim/state", nil) // never delayed
	sim.SetLatency(0)
	c.do("GET", "/v1/instances", nil)
	sim.Inject(skeletonsim.Fault{Op: "GET /v1/routes", Delay: 5 * time.Millisecond})
	c.do("GET", "/v1/routes", nil)
	sim.SetLatency(time.Second)

	if got, want := sim.InjectedLatency(), latency+5*time.Millisecond; got != want {
		t.Errorf("InjectedLatency = %v, want %v", got, want)
	}
	var stats struct {
		LatencyMS         float64 `json:"latency_ms"`
		InjectedLatencyMS float64 `json:"injected_latency_ms"`
	}
	c.do("GET", "/_sim/stats", nil).decode(t, &stats)
	want := struct {
		LatencyMS         float64 `json:"latency_ms"`
		InjectedLatencyMS float64 `json:"injected_latency_ms"`
	}{LatencyMS: 1000, InjectedLatencyMS: 25}
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Errorf("/_sim/stats latency (-want +got):\n%s", diff)
	}
}
