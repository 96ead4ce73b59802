// Command bench is `make bench`: scale scenarios for one cloud's CCM against
// its simulated cloud with injected per-call latency, on a real local
// control plane.
//
//	(a) BENCH_NODES nodes join at once: seconds until all are initialized,
//	    cloud calls by operation;
//	(b) BENCH_SERVICES LoadBalancer Services: seconds until all have an
//	    ingress, cloud calls;
//	(c) the idle cluster over BENCH_IDLE_WINDOW (a minute; 30 s in a
//	    sweep): cloud calls per hour;
//	(d) one node joins the cluster with all those LBs: cloud writes;
//	(e) one node leaves it (instance deleted, then its Node): cloud writes
//	    until it is behind no LB;
//	(f) a VM is deleted under its Node: seconds until the CCM deletes the
//	    Node, cloud calls;
//	(g) every LoadBalancer Service is deleted: seconds until the cloud has
//	    no LB, cloud calls.
//
// It also reports the CCM process's peak RSS, prints a Markdown table and
// writes the figures as JSON. For each step it also prints what held the
// CCM's heap at the step's peak: a heap profile is taken whenever the
// CCM's anonymous RSS grows 10% past the step's last one, and the largest
// is summarized by the code that allocated what it holds (serving a
// profile costs the CCM a little memory, a few times per step).
// BENCH_NODE_IMAGES=<n> makes every node report n container images, as
// real kubelets do (up to 50); BENCH_HEAP_PROFILES=<dir> also saves each
// step's peak profile there (go tool pprof -top <file>). GOGC, GOMEMLIMIT and GODEBUG are passed on
// to the CCM (GODEBUG=gctrace=1 logs its heap at every collection), and
// so are the KEY=VALUE settings of BENCH_CCM_ENV (space-separated), e.g.
// BENCH_CCM_ENV=DO_LB_DROPLET_TAG=k8s-bench-lb-nodes. A cloud named
// <cloud>+<mode> (CLOUD=digitalocean+tag) is one of the modes in variants.
// BENCH_CCM_BINARY=<path> runs a CCM built beforehand instead of building
// this checkout's: another commit's, to compare two on one harness.
// BENCH_RUNS=<n> runs everything n times, each on a fresh cluster, and
// prints each figure's min, median and max: how much one run's can move
// (with BENCH_HEAP_PROFILES, run i saves its profiles under <dir>/run-<i>).
// -floor measures what a CCM costs before it does any work (floor.go).
// BENCH_PPROF=<host:port> serves the bench process's own profiles
// (net/http/pprof), the simulators' included: go tool pprof
// http://<host:port>/debug/pprof/profile while a step runs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// servePprof serves net/http/pprof's handlers on addr ("" serves none).
func servePprof(addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("BENCH_PPROF: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() { _ = (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln) }()
	fmt.Fprintf(os.Stderr, "bench: profiles at http://%s/debug/pprof/\n", ln.Addr())
	return nil
}

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
	// CCMEnv is the environment the CCM ran with beyond the simulator's
	// (runtimeEnv): the Go runtime's and the provider's settings.
	CCMEnv map[string]string `json:"ccmEnv,omitempty"`
	// CCMBinary is BENCH_CCM_BINARY: a CCM binary built beforehand; ""
	// when the bench built this checkout's.
	CCMBinary string `json:"ccmBinary,omitempty"`
	// Runs is BENCH_RUNS when more than one: how many times the scenarios
	// ran (spread.go).
	Runs int `json:"runs,omitempty"`
}

// sweepIdleWindow is scenario (c)'s length in a sweep, unless
// BENCH_IDLE_WINDOW says otherwise: one instance-cache period, which
// keeps a 5,000-node sweep shorter by half an hour (a single run idles a
// minute).
const sweepIdleWindow = 30 * time.Second

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
		CCMBinary:      os.Getenv("BENCH_CCM_BINARY"),
	}
	if runs := envInt("BENCH_RUNS", 1); runs > 1 {
		s.Runs = runs
	}
	out := flag.String("out", "", "JSON output file (default bin/bench/<cloud>.json)")
	sweep := flag.String("sweep", "", "run every cloud of BENCH_CLOUDS at every size of BENCH_SIZES, writing <dir>/<cloud>-<nodes>x<services>.json (runs whose file exists are skipped)")
	report := flag.String("report", "", "write docs/performance.md's tables and plots from the runs in this directory")
	check := flag.Bool("check", false, "with -report: fail if docs/performance.md or its plots are not what the runs give")
	floor := flag.Bool("floor", false, "measure what a CCM costs before it does any work: the memory of a process linking each layer of a CCM, when its main starts (floor.go)")
	flag.Parse()
	if _, set := os.LookupEnv("BENCH_IDLE_WINDOW"); !set && *sweep != "" {
		s.IdleWindow = sweepIdleWindow
	}

	if err := servePprof(os.Getenv("BENCH_PPROF")); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *floor:
		err = runFloor(ctx, os.Stdout)
	case *report != "":
		err = writeReport(*report, *check)
	case *sweep != "":
		err = runSweep(ctx, s, *sweep)
	default:
		err = runOne(ctx, s, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runOne runs the scenarios (s.Runs times, each on a fresh cluster),
// prints each run's table and, for several, their spread, and writes the
// JSON.
func runOne(ctx context.Context, s settings, out string) error {
	start := time.Now()
	env, err := runtimeEnv(s.Cloud)
	if err != nil {
		return err
	}
	s.CCMEnv = env
	var runs []*results
	for i := range max(s.Runs, 1) {
		one := s
		if s.Runs > 1 {
			fmt.Printf("==> run %d of %d\n", i+1, s.Runs)
			if s.HeapProfiles != "" {
				one.HeapProfiles = filepath.Join(s.HeapProfiles, fmt.Sprintf("run-%d", i+1))
			}
		}
		res, err := run(ctx, one)
		if err != nil {
			return err
		}
		printTable(os.Stdout, s, res)
		runs = append(runs, res)
	}
	r := record{Settings: s, Results: runs[0], Run: newRunInfo(start)}
	if len(runs) > 1 {
		printSpread(os.Stdout, s, runs)
		r.Results, r.Repeats = medianRun(runs), runs
	}
	return writeJSON(out, r)
}

// record is one run as its JSON file holds it.
type record struct {
	Settings settings `json:"settings"`
	// Results are the run's figures; of several runs (BENCH_RUNS), the
	// figures of the run with the median peak RSS.
	Results *results `json:"results"`
	// Repeats are every run's figures, in the order they ran, when there
	// were several.
	Repeats []*results `json:"repeats,omitempty"`
	Run     runInfo    `json:"run"`
}

// runInfo says where and when a run was made.
type runInfo struct {
	Commit string    `json:"commit"`
	Date   time.Time `json:"date"`
	// WallSeconds is the whole run, control plane start-up included.
	WallSeconds float64 `json:"wallSeconds"`
	CPUs        int     `json:"cpus"`
}

func newRunInfo(start time.Time) runInfo {
	commit := "unknown"
	if b, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12").Output(); err == nil {
		commit = strings.TrimSpace(string(b))
	}
	return runInfo{Commit: commit, Date: start.UTC().Truncate(time.Second), WallSeconds: time.Since(start).Seconds(), CPUs: runtime.NumCPU()}
}

func writeJSON(path string, r record) error {
	if path == "" {
		root, err := cluster.ModuleRoot()
		if err != nil {
			return err
		}
		path = filepath.Join(root, "bin", "bench", r.Settings.Cloud+".json")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
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
