// Command soak is `make soak`: a fault-injected soak of one cloud's CCM
// (or of every cloud with load balancers, -cloud=all) with two replicas
// under leader election, on a real local control plane and the cloud's
// simulator (see package soak). It prints a table, writes each run's JSON
// to <out>/<cloud>-seed<seed>.json, and exits 1 when a run found a
// violation or missed its convergence budget.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
	"github.com/ccmkit/ccmkit/internal/soak"
)

func main() {
	var cfg soak.Config
	cloud := flag.String("cloud", "digitalocean", "provider name, or all (every provider with load balancers)")
	flag.IntVar(&cfg.Ops, "ops", 500, "random operations")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the plan (same seed, same operations)")
	flag.IntVar(&cfg.Kills, "kills", 50, "leader kills, half between two operations, half mid-reconcile")
	flag.Float64Var(&cfg.Rate5xx, "5xx", 0.2, "fraction of cloud requests answered 500 or 503")
	flag.Float64Var(&cfg.Rate429, "429", 0.05, "fraction of cloud requests answered 429 with Retry-After")
	flag.Float64Var(&cfg.RateResets, "resets", 0.02, "fraction of cloud requests whose connection is reset")
	flag.Float64Var(&cfg.RateLatency, "latency", 0.05, "fraction of cloud requests delayed by -latency-delay")
	flag.DurationVar(&cfg.LatencyDelay, "latency-delay", 500*time.Millisecond, "delay of a delayed request")
	flag.DurationVar(&cfg.Converge, "converge", 60*time.Second, "budget for convergence once the faults stop")
	out := flag.String("out", "bin/soak", "directory for the JSON results")
	tags := flag.String("tags", "", "Go build tags for the CCM binary, comma-separated (a deliberately broken build)")
	keep := flag.Bool("keep", false, "keep each run's logs (the JSON names the directory)")
	flag.Parse()
	if *tags != "" {
		cfg.BuildTags = strings.Split(*tags, ",")
	}
	cfg.Logf = func(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

	providers, err := pick(*cloud)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var results []*soak.Result
	failed := false
	for _, p := range providers {
		cfg.Provider = p
		cfg.WorkDir = ""
		if *keep {
			if cfg.WorkDir, err = os.MkdirTemp("", "ccmkit-soak-"+p.Name+"-"); err != nil {
				fmt.Fprintln(os.Stderr, "soak:", err)
				os.Exit(1)
			}
		}
		res, err := soak.Run(ctx, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: %s: %v\n", p.Name, err)
			os.Exit(1)
		}
		results = append(results, res)
		failed = failed || res.Failed(cfg.Converge)
		path, err := soak.WriteJSON(*out, res)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		fmt.Printf("==> JSON written to %s\n", path)
	}
	soak.PrintTable(os.Stdout, results)
	if failed {
		os.Exit(1)
	}
}

// pick returns the provider called name, or every provider with load
// balancers for "all".
func pick(name string) ([]cluster.Provider, error) {
	if name == "all" {
		var out []cluster.Provider
		for _, p := range cluster.Providers {
			if p.LoadBalancers {
				out = append(out, p)
			}
		}
		return out, nil
	}
	if p, ok := cluster.Lookup(name); ok {
		return []cluster.Provider{p}, nil
	}
	return nil, fmt.Errorf("unknown cloud %q", name)
}
