package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// size is one cluster size of a sweep.
type size struct{ Nodes, Services int }

func (z size) String() string { return fmt.Sprintf("%dx%d", z.Nodes, z.Services) }

// Label is the size as the report prints it: "1,000 × 200".
func (z size) Label() string { return thousands(z.Nodes) + " × " + thousands(z.Services) }

// defaultSizes are the sweep's sizes: three that grow nodes and Services
// together (the plots' points) and 1,000 × 20, which against 100 × 20
// shows what grows with nodes and against 1,000 × 200 what grows with
// Services.
var defaultSizes = []size{{100, 20}, {1000, 20}, {1000, 200}, {5000, 1000}}

// defaultClouds are the sweep's clouds: every one internal/cluster has,
// in its order, each followed by its variants.
func defaultClouds() []string {
	var out []string
	for _, p := range cluster.Providers {
		out = append(out, p.Name)
		for _, v := range slices.Sorted(maps.Keys(variants)) {
			if strings.HasPrefix(v, p.Name+"+") {
				out = append(out, v)
			}
		}
	}
	return out
}

// parseSizes reads BENCH_SIZES: "100x20 1000x200".
func parseSizes(v string) ([]size, error) {
	if strings.TrimSpace(v) == "" {
		return defaultSizes, nil
	}
	var out []size
	for _, f := range strings.Fields(v) {
		n, m, ok := strings.Cut(f, "x")
		nodes, err1 := strconv.Atoi(n)
		services, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || nodes <= 0 || services < 0 {
			return nil, fmt.Errorf("BENCH_SIZES: %q is not <nodes>x<services>", f)
		}
		out = append(out, size{nodes, services})
	}
	return out, nil
}

// runFile is where a sweep keeps a run.
func runFile(dir, cloud string, z size) string {
	return filepath.Join(dir, cloud+"-"+z.String()+".json")
}

// runSweep runs every cloud at every size, one after the other (each with
// its own control plane), and writes each run's JSON into dir. A run whose
// file exists is skipped, so an interrupted sweep resumes where it
// stopped; delete a file to run it again.
func runSweep(ctx context.Context, base settings, dir string) error {
	sizes, err := parseSizes(os.Getenv("BENCH_SIZES"))
	if err != nil {
		return err
	}
	clouds := defaultClouds()
	if v := strings.Fields(os.Getenv("BENCH_CLOUDS")); len(v) > 0 {
		clouds = v
	}
	start := time.Now()
	for _, z := range sizes {
		for _, cloud := range clouds {
			path := runFile(dir, cloud, z)
			if _, err := os.Stat(path); err == nil {
				fmt.Printf("==> %s at %s: %s exists, skipped\n", cloud, z.Label(), path)
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			s := base
			s.Cloud, s.Nodes, s.Services = cloud, z.Nodes, z.Services
			fmt.Printf("==> %s at %s (sweep %s so far)\n", cloud, z.Label(), time.Since(start).Round(time.Second))
			if err := runOne(ctx, s, path); err != nil {
				return fmt.Errorf("%s at %s: %w", cloud, z.Label(), err)
			}
		}
	}
	fmt.Printf("==> sweep done in %s; `make perf-docs` writes docs/performance.md from %s\n", time.Since(start).Round(time.Second), dir)
	return nil
}

// thousands formats n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
