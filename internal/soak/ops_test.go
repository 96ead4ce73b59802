package soak

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// TestFaultsCountedAsInjected: the counts the table shows are requests the
// simulated cloud really failed, not faults merely armed.
func TestFaultsCountedAsInjected(t *testing.T) {
	p, _ := cluster.Lookup("skeleton")
	sim, err := p.StartSim(cluster.SimOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	d := newDriver(&cluster.Cluster{Sim: sim}, nil)
	d.background(Config{Rate5xx: 0.5})
	if err := d.apply(context.Background(), Op{Kind: Window401, Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	for range 100 {
		resp, err := http.Get(sim.URL() + "/v1/instances")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
	}
	got := d.faultCounts()
	if got["5xx"] != int64(statuses[500]+statuses[503]) || got["401"] != int64(statuses[401]) || got["5xx"] == 0 || got["401"] == 0 {
		t.Fatalf("counted %v; the cloud answered %v", got, statuses)
	}
	d.removeFaults()
	for range 20 {
		resp, err := http.Get(sim.URL() + "/v1/instances")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if after := d.faultCounts(); after["5xx"] != got["5xx"] || after["401"] != got["401"] {
		t.Fatalf("faults counted after removeFaults: %v, then %v", got, after)
	}
}
