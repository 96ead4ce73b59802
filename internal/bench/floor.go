package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// `bench -floor` measures what a CCM costs before it does any work: the
// memory of a process that links one more layer of what a CCM is made of
// at each step (./internal/bench/floor, one build tag a layer) when its
// main starts. A scenario's peak RSS is this floor plus what building the
// command and doing the work add.
//
// It reads the probe's /proc/<pid>/status while the probe runs, not the
// rusage of a process that has exited: Go starts a child on its own
// memory until it execs (vfork), and Linux then counts that memory's
// high-water mark into the child's ru_maxrss (exec_mmap), so a child of a
// process as large as this one reports this one's peak.

// floorLayer is one build of ./internal/bench/floor.
type floorLayer struct {
	name string
	tag  string // the build tag; "" links the Go runtime alone
}

var floorLayers = []floorLayer{
	{"Go runtime alone", ""},
	{"client-go: clientset, informers", "floor_clientgo"},
	{"+ k8s.io/cloud-provider's controllers", "floor_controllers"},
	{"+ k8s.io/apiserver's delegated authentication and authorization", "floor_delegatedauth"},
	{"+ k8s.io/cloud-provider/app", "floor_app"},
	{"+ ccmkit's framework", "floor_framework"},
	{"framework + skeleton provider", "floor_skeleton"},
	{"framework + digitalocean provider", "floor_digitalocean"},
	{"framework + openstack provider", "floor_openstack"},
	{"framework + brightbox provider", "floor_brightbox"},
	{"framework + triton provider", "floor_triton"},
	{"framework + rancher provider", "floor_rancher"},
}

// floorRuns is how many times each binary runs; the median VmHWM's run is
// printed.
const floorRuns = 5

// floorRow is one binary's figures.
type floorRow struct {
	name       string
	packages   int   // packages linked, the standard library's included
	size       int64 // the executable's size
	hwm        int64 // VmHWM
	anon, file int64 // RssAnon and RssFile
}

func runFloor(ctx context.Context, w io.Writer) error {
	root, err := cluster.ModuleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-floor-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()

	var rows []floorRow
	for _, l := range floorLayers {
		var tags []string
		if l.tag != "" {
			tags = []string{l.tag}
		}
		row, err := measureBuild(ctx, root, dir, "./internal/bench/floor", tags)
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		row.name = l.name
		rows = append(rows, row)
		fmt.Fprintf(os.Stderr, "bench: %s: %.1f MiB\n", l.name, mib(row.hwm))
	}
	printFloor(w, rows)
	return nil
}

// measureBuild builds pkg with tags as the CCM is built, counts the
// packages it links, and runs it floorRuns times, each time read from disk
// (dropFromPageCache), as the scenarios run the CCM.
func measureBuild(ctx context.Context, root, dir, pkg string, tags []string) (floorRow, error) {
	bin, err := cluster.BuildCommand(ctx, root, dir, pkg, tags...)
	if err != nil {
		return floorRow{}, err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return floorRow{}, err
	}
	n, err := countPackages(ctx, root, pkg, tags)
	if err != nil {
		return floorRow{}, err
	}
	var runs []floorRow
	for range floorRuns {
		if err := dropFromPageCache(bin); err != nil {
			return floorRow{}, err
		}
		r, err := probeMemory(ctx, bin)
		if err != nil {
			return floorRow{}, err
		}
		runs = append(runs, r)
	}
	row := medianFloorRow(runs)
	row.packages, row.size = n, fi.Size()
	return row, nil
}

// medianFloorRow is the run with the median VmHWM.
func medianFloorRow(runs []floorRow) floorRow {
	return middleBy(runs, func(r floorRow) int64 { return r.hwm })
}

func countPackages(ctx context.Context, root, pkg string, tags []string) (int, error) {
	args := []string{"list", "-deps"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("go list %s: %w", pkg, err)
	}
	return len(strings.Fields(string(out))), nil
}

// probeMemory starts bin, a build of ./internal/bench/floor, waits for its
// main to start and reads its memory then.
func probeMemory(ctx context.Context, bin string) (floorRow, error) {
	cmd := exec.CommandContext(ctx, bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return floorRow{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return floorRow{}, err
	}
	if err := cmd.Start(); err != nil {
		return floorRow{}, err
	}
	defer func() { _ = cmd.Wait() }()
	defer func() { _ = stdin.Close() }()
	if _, err := stdout.Read(make([]byte, 1)); err != nil {
		return floorRow{}, fmt.Errorf("waiting for the probe's main: %w", err)
	}
	st, err := procStatus(cmd.Process.Pid)
	if err != nil {
		return floorRow{}, err
	}
	return floorRow{hwm: st["VmHWM"], anon: st["RssAnon"], file: st["RssFile"]}, nil
}

func printFloor(w io.Writer, rows []floorRow) {
	fmt.Fprintf(w, "\n### What a CCM costs before it works (median of %d runs each, executable read from disk)\n\n", floorRuns)
	fmt.Fprintln(w, "| the process links | packages | executable, MiB | VmHWM when main starts, MiB | anonymous | file-backed |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %.1f |\n", r.name, r.packages, mib(r.size), mib(r.hwm), mib(r.anon), mib(r.file))
	}
}
