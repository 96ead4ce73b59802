package main

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// peakProfiles keeps, for the step under way, the CCM's heap profile taken
// at the largest anonymous RSS the sampler saw (memSampler.onPeak): what
// held the memory at the step's peak. Serving a profile costs the CCM a
// little memory and CPU, a few times per step.
type peakProfiles struct {
	ctx      context.Context
	profiler *heapProfiler

	mu sync.Mutex
	// served is set once a profile was fetched: the CCM's port is up.
	served bool
	at     *heapAtPeak
	raw    []byte
	errs   int
}

// onPeak is the sampler's callback: it profiles the heap now and keeps
// the profile if it is the step's largest so far. It reports whether it
// got one; until the CCM serves its secure port it cannot, silently.
func (p *peakProfiles) onPeak(anon int64) bool {
	prof, err := p.profiler.fetch(p.ctx)
	p.mu.Lock()
	served := p.served || err == nil
	p.served = served
	p.mu.Unlock()
	if !served {
		return false
	}
	if err == nil {
		err = p.keep(anon, prof)
	}
	if err != nil {
		p.mu.Lock()
		p.errs++
		first := p.errs == 1
		p.mu.Unlock()
		if first {
			fmt.Fprintln(os.Stderr, "bench: heap profile:", err)
		}
		return false
	}
	return true
}

func (p *peakProfiles) keep(anon int64, prof []byte) error {
	top, inUse, err := topHolders(prof, 5)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at == nil || anon >= p.at.AnonBytes {
		p.at, p.raw = &heapAtPeak{AnonBytes: anon, InUseBytes: inUse, Top: top}, prof
	}
	return nil
}

// take returns the step's peak profile and starts the next step's; a step
// too short for the sampler to profile is profiled now.
func (p *peakProfiles) take(anonNow int64) (*heapAtPeak, []byte) {
	p.mu.Lock()
	empty := p.at == nil
	p.mu.Unlock()
	if empty {
		p.onPeak(anonNow)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at, raw := p.at, p.raw
	p.at, p.raw = nil, nil
	return at, raw
}
