// Command bench is `make bench`: scale scenarios for one cloud's CCM against
// its simulated cloud with injected per-call latency, on a real local
// control plane.
//
//	(a) BENCH_NODES nodes join at once: seconds until all are initialized,
//	    cloud calls by operation;
//	(b) BENCH_SERVICES LoadBalancer Services: seconds until all have an
//	    ingress, cloud calls;
//	(c) the idle cluster over BENCH_IDLE_WINDOW: cloud calls per hour;
//	(d) one node joins the cluster with all those LBs: cloud writes;
//	(e) one node leaves it (instance deleted, then its Node): cloud writes
//	    until it is behind no LB.
//
// It also reports the CCM process's peak RSS, prints a Markdown table and
// writes the figures as JSON. BENCH_NODE_IMAGES=<n> makes every node report
// n container images, as real kubelets do (up to 50); BENCH_HEAP_PROFILES=
// <dir> also saves the CCM's heap profile after each step there (go tool
// pprof -top <file>; serving them costs the CCM some memory, so compare
// peak RSS from runs without). GOGC, GOMEMLIMIT and GODEBUG are passed on
// to the CCM (GODEBUG=gctrace=1 logs its heap at every collection).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// settings are the scenario sizes, from the environment (make bench passes
// them through) or flags.
type settings struct {
	Cloud      string        `json:"cloud"`
	Nodes      int           `json:"nodes"`
	Services   int           `json:"services"`
	Latency    time.Duration `json:"latency"`
	IdleWindow time.Duration `json:"idleWindow"`
	// AddressRefresh is the CCM's --node-status-update-frequency during the
	// run (upstream's default is 5m).
	AddressRefresh time.Duration `json:"addressRefresh"`
	// NodeImages is how many container images each node reports in
	// status.images, as real kubelets do (the stand-in reports none).
	NodeImages int `json:"nodeImages"`
	// HeapProfiles is a directory for the CCM's heap profiles; "" saves
	// none.
	HeapProfiles string `json:"-"`
}

func main() {
	s := settings{
		Cloud:          envOr("CLOUD", "skeleton"),
		Nodes:          envInt("BENCH_NODES", 1000),
		Services:       envInt("BENCH_SERVICES", 200),
		Latency:        envDuration("BENCH_LATENCY", 30*time.Millisecond),
		IdleWindow:     envDuration("BENCH_IDLE_WINDOW", time.Minute),
		AddressRefresh: envDuration("BENCH_ADDRESS_REFRESH", 30*time.Second),
		NodeImages:     envInt("BENCH_NODE_IMAGES", 0),
		HeapProfiles:   os.Getenv("BENCH_HEAP_PROFILES"),
	}
	out := flag.String("out", "", "JSON output file (default bin/bench/<cloud>.json)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	printTable(os.Stdout, s, res)
	if err := writeJSON(*out, s, res); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func writeJSON(path string, s settings, res *results) error {
	if path == "" {
		root, err := cluster.ModuleRoot()
		if err != nil {
			return err
		}
		path = filepath.Join(root, "bin", "bench", s.Cloud+".json")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Settings settings `json:"settings"`
		Results  *results `json:"results"`
	}{s, res}, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("\nJSON written to %s\n", path)
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// envInt is key's value, or def when unset or not a count (0 is one:
// BENCH_SERVICES=0 runs the node scenarios alone).
func envInt(key string, def int) int {
	v, err := strconv.Atoi(os.Getenv(key))
	if err != nil || v < 0 {
		return def
	}
	return v
}

func envDuration(key string, def time.Duration) time.Duration {
	v, err := time.ParseDuration(os.Getenv(key))
	if err != nil || v <= 0 {
		return def
	}
	return v
}
