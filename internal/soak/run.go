package soak

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// Config is one soak run.
type Config struct {
	Provider cluster.Provider
	Seed     uint64
	Ops      int
	Kills    int
	// Rate5xx, Rate429, RateResets and RateLatency are the fractions of
	// cloud requests answered 5xx, 429 (Retry-After 1s), a reset
	// connection, or delayed by LatencyDelay, for the whole op phase.
	Rate5xx, Rate429, RateResets, RateLatency float64
	LatencyDelay                              time.Duration
	// Converge is the budget, from the faults stopping, for the
	// invariants to hold; Stable is how long they must then keep holding.
	Converge, Stable time.Duration
	// InitialNodes join before the op phase; 3 when 0.
	InitialNodes int
	// Root, BinDir, WorkDir and BuildTags are as in cluster.Options.
	Root, BinDir, WorkDir string
	BuildTags             []string
	// Plane, when set, is a running control plane for Provider (the
	// end-to-end suite's shared one) to attach to instead of starting
	// one; Root, BinDir and BuildTags are then the plane's.
	Plane *cluster.Plane
	// Logf reports progress; nil is silent.
	Logf func(format string, args ...any)
}

// Run starts a cluster, runs the plan with faults and kills, waits for
// convergence and checks the invariants. An error means the run could not
// be carried out; violations are in the Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	started := time.Now()
	c, err := cfg.start(ctx)
	if err != nil {
		return nil, err
	}
	reps := newReplicas(c, cfg.Logf)
	defer func() {
		reps.stop()
		c.Stop()
		reps.wg.Wait()
	}()
	caps := capabilities(cfg.Provider)
	plan := Plan(PlanSpec{Seed: cfg.Seed, Ops: cfg.Ops, Kills: cfg.Kills, InitialNodes: cfg.InitialNodes, Caps: caps})
	res := newResult(cfg, plan)
	d := newDriver(c, reps)
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	if err := d.watchNodeDeletions(watchCtx); err != nil {
		return nil, err
	}
	go reps.watch(watchCtx)
	for range 2 {
		if err := reps.start(); err != nil {
			return nil, err
		}
	}
	for i := range cfg.InitialNodes {
		if err := d.apply(ctx, Op{Kind: NodeJoin, Node: fmt.Sprintf("node-%d", i)}); err != nil {
			return nil, err
		}
	}
	baseline, _ := companions(c.Sim)
	cfg.Logf("%s: %d operations, %d kills, seed %d (set-up %s)", cfg.Provider.Name, len(plan), cfg.Kills, cfg.Seed, time.Since(started).Round(time.Millisecond))

	opsStart := time.Now()
	d.background(cfg)
	for i, op := range plan {
		if err := d.apply(ctx, op); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.OpErrors = append(res.OpErrors, fmt.Sprintf("op %d (%s): %v", i, op, err))
		}
		if err := sleep(ctx, op.Pause); err != nil {
			return nil, err
		}
	}
	d.flushKills(ctx)
	d.removeFaults()
	res.OpSeconds = time.Since(opsStart).Seconds()
	cfg.Logf("%s: operations done in %.1fs; faults off, waiting for convergence", cfg.Provider.Name, res.OpSeconds)

	last, err := d.converge(ctx, cfg, caps, baseline, res)
	if err != nil {
		return nil, err
	}
	res.Violations = last
	res.Faults = d.faultCounts()
	kills, changes, failovers, exits := reps.stats()
	res.Kills, res.Failovers, res.Exits = kills, changes, exits
	for _, e := range exits {
		if panicked(e) {
			res.Violations = append(res.Violations, Violation{InvNoPanic, e})
		}
	}
	for _, f := range failovers {
		res.LongestFailoverSeconds = max(res.LongestFailoverSeconds, f.Seconds())
	}
	res.WorkDir = c.WorkDir
	return res, nil
}

// start starts the soak's cluster, or attaches it to cfg.Plane.
func (cfg Config) start(ctx context.Context) (*cluster.Cluster, error) {
	sim := cluster.SimOptions{Seed: cfg.Seed}
	if cfg.Plane != nil {
		return cfg.Plane.Attach(ctx, cluster.AttachOptions{WorkDir: cfg.WorkDir, Sim: sim})
	}
	return cluster.Start(ctx, cluster.Options{
		Provider: cfg.Provider, Root: cfg.Root, BinDir: cfg.BinDir, WorkDir: cfg.WorkDir,
		BuildTags: cfg.BuildTags, Sim: sim,
	})
}

func (cfg Config) withDefaults() Config {
	if cfg.InitialNodes == 0 {
		cfg.InitialNodes = 3
	}
	if cfg.Converge == 0 {
		cfg.Converge = 60 * time.Second
	}
	if cfg.Stable == 0 {
		cfg.Stable = 5 * time.Second
	}
	if cfg.LatencyDelay == 0 {
		cfg.LatencyDelay = 500 * time.Millisecond
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return cfg
}

// capabilities are the provider's as the plan needs them.
func capabilities(p cluster.Provider) Capabilities {
	return Capabilities{UDP: p.Soak.UDP, SourceRanges: p.Soak.SourceRanges, Valid: p.Soak.Valid, Invalid: p.Soak.Invalid}
}

// converge polls (advancing the cloud each time) until the invariants
// hold and keep holding for cfg.Stable, or cfg.Converge passes. It
// returns the last check's violations and records the time to converge:
// from the faults stopping to the first clean check of the stable run.
func (d *driver) converge(ctx context.Context, cfg Config, caps Capabilities, baseline map[string]string, res *Result) ([]Violation, error) {
	start := time.Now()
	var cleanSince time.Time
	for {
		d.c.Sim.Advance()
		s, err := d.snapshot(ctx, caps, baseline)
		if err != nil {
			return nil, err
		}
		v := Check(s)
		res.Checked = s.summary()
		now := time.Now()
		switch {
		case len(v) > 0:
			cleanSince = time.Time{}
		case cleanSince.IsZero():
			cleanSince = now
		}
		if !cleanSince.IsZero() && now.Sub(cleanSince) >= cfg.Stable {
			res.Converged, res.ConvergeSeconds = true, cleanSince.Sub(start).Seconds()
			return nil, nil
		}
		if now.Sub(start) >= cfg.Converge+cfg.Stable {
			res.ConvergeSeconds = now.Sub(start).Seconds()
			if len(v) == 0 { // clean at the end, but not for long enough or too late
				return nil, nil
			}
			return v, nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// watchNodeDeletions records every Node deletion for the whole run.
func (d *driver) watchNodeDeletions(ctx context.Context) error {
	f := informers.NewSharedInformerFactory(d.c.Kube, 0)
	inf := f.Core().V1().Nodes().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if n, ok := obj.(*corev1.Node); ok {
			d.nodeDeleted(n.Name)
		}
	}}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("node informer did not sync")
	}
	return nil
}
