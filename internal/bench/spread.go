package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
)

// BENCH_RUNS=<n> runs the scenarios n times, each on a fresh control
// plane, simulator and CCM, and prints how much each figure moved between
// them: how far one run's figure can be trusted, and how large a change
// between two commits must be before it says anything.

// spreadRow is one figure over several runs.
type spreadRow struct {
	name          string
	min, med, max float64
}

// spread is every run's whole-run figures, and each scenario's seconds,
// calls and writes, as min, median and max over runs. Scenarios are
// matched by their position: every run runs the same ones.
func spread(runs []*results) []spreadRow {
	row := func(name string, f func(*results) float64) spreadRow {
		vs := make([]float64, len(runs))
		for i, r := range runs {
			vs[i] = f(r)
		}
		sort.Float64s(vs)
		return spreadRow{name: name, min: vs[0], med: median(vs), max: vs[len(vs)-1]}
	}
	rows := []spreadRow{
		row("peak RSS (MiB)", func(r *results) float64 { return mib(r.PeakRSSBytes) }),
		row("anonymous part (MiB)", func(r *results) float64 { return mib(r.PeakAnonBytes) }),
		row("file-backed part (MiB)", func(r *results) float64 { return mib(r.PeakFileBytes) }),
		row("CPU time (s)", func(r *results) float64 { return r.CPUSeconds }),
	}
	n := len(runs[0].Scenarios)
	for _, r := range runs[1:] {
		n = min(n, len(r.Scenarios))
	}
	for i := range n {
		name := runs[0].Scenarios[i].Name
		rows = append(rows,
			row(name+": seconds", func(r *results) float64 { return r.Scenarios[i].Seconds }),
			row(name+": cloud calls", func(r *results) float64 { return float64(r.Scenarios[i].Total) }),
			row(name+": writes", func(r *results) float64 { return float64(r.Scenarios[i].Writes) }),
		)
	}
	return rows
}

// median of sorted vs.
func median(vs []float64) float64 {
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[m]
	}
	return (vs[m-1] + vs[m]) / 2
}

// medianRun is the run whose peak RSS is the median's: the run a
// single-run JSON reports.
func medianRun(runs []*results) *results {
	return middleBy(runs, func(r *results) int64 { return r.PeakRSSBytes })
}

// middleBy is the element of xs whose key is the median's, the lower of
// the two middle ones for an even count (a run, whose figures belong
// together, rather than an average of two).
func middleBy[T any](xs []T, key func(T) int64) T {
	sorted := slices.Clone(xs)
	slices.SortStableFunc(sorted, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return sorted[(len(sorted)-1)/2]
}

func printSpread(w io.Writer, s settings, runs []*results) {
	fmt.Fprintf(w, "\n### %s: %d runs, each on a fresh control plane, simulator and CCM\n\n", s.Cloud, len(runs))
	fmt.Fprintln(w, "| figure | min | median | max | max - min |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range spread(runs) {
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %.1f |\n", r.name, r.min, r.med, r.max, r.max-r.min)
	}
}
