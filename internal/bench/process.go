package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cpuSeconds reads the process's user and system CPU time from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s: Linux's
// USER_HZ on every architecture Go supports).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CCM's CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces: count from its ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return float64(ticks) / 100, nil
}

// runtimeEnv is the environment the CCM of cloud runs with: the Go
// runtime's settings from the bench's environment (GOGC, GOMEMLIMIT,
// GODEBUG; GODEBUG=gctrace=1 shows its heap over the run in its log,
// GOGC=100 measures Go's default), the provider settings of cloud's mode
// if it is a variant, and BENCH_CCM_ENV's, as space-separated KEY=VALUE
// (e.g. DO_LB_DROPLET_TAG=k8s-bench-lb-nodes), to measure a mode that is
// not the default.
func runtimeEnv(cloud string) (map[string]string, error) {
	env := map[string]string{}
	if _, mode, ok := strings.Cut(cloud, "+"); ok {
		v, found := variants[cloud]
		if !found {
			return nil, fmt.Errorf("%s: no mode %q (the bench knows %s)", cloud, mode, strings.Join(slices.Sorted(maps.Keys(variants)), ", "))
		}
		maps.Copy(env, v)
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for _, kv := range strings.Fields(os.Getenv("BENCH_CCM_ENV")) {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env, nil
}

// variants are modes of a cloud's CCM that the sweep measures beside its
// default, named <cloud>+<mode>, with the provider settings they run
// with.
var variants = map[string]map[string]string{
	// Load balancers that target a droplet tag: node churn is one tag
	// call, not a PUT per load balancer.
	"digitalocean+tag": {"DO_LB_DROPLET_TAG": "k8s-bench-lb-nodes"},
}

// dropFromPageCache writes the file at path out and drops its pages from
// the page cache, so that the CCM's executable is read from disk when it
// starts, as a CCM restarted on a busy node reads it, in every run alike.
// A binary go build just wrote sits in the page cache in large folios,
// which the kernel maps into the process as 2 MiB pages (FilePmdMapped
// in /proc/<pid>/smaps_rollup): its resident executable pages, half of
// its RSS, then vary by up to ~8 MiB between two builds of the same code,
// more than most changes a run is meant to show.
func dropFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing out %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("dropping %s from the page cache: %w", path, err)
	}
	return nil
}
