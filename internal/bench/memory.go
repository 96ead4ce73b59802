package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memSampler reads the CCM's /proc/<pid>/status at a fixed interval and
// keeps the largest anonymous and file-backed resident sizes it saw. VmHWM
// is their peak sum, but not which part made it: the anonymous part is the
// Go heap, stacks and runtime (what the CCM's work allocates); the
// file-backed part is the pages of the executable it has touched, which
// depends on the binary's size and the page cache, not on the work.
type memSampler struct {
	pid  int
	stop chan struct{}
	done sync.WaitGroup

	mu         sync.Mutex
	anon, file int64
	// onPeak, if set, is called (on the sampling goroutine) when the
	// anonymous RSS reaches trigger, which then moves 10% above it unless
	// onPeak reports it could not act (the CCM not serving yet): a heap
	// profile near each new peak of a step (resetPeak).
	onPeak  func(anon int64) bool
	trigger int64
}

func startMemSampler(pid int, every time.Duration, onPeak func(anon int64) bool) *memSampler {
	m := &memSampler{pid: pid, stop: make(chan struct{}), onPeak: onPeak}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memSampler) sample() {
	st, err := procStatus(m.pid)
	if err != nil {
		return // the process is gone; the peaks stand
	}
	anon := st["RssAnon"]
	m.mu.Lock()
	m.anon = max(m.anon, anon)
	m.file = max(m.file, st["RssFile"])
	fire := m.onPeak != nil && anon >= m.trigger
	m.mu.Unlock()
	if fire && m.onPeak(anon) {
		m.mu.Lock()
		m.trigger = max(m.trigger, anon+anon/10+1)
		m.mu.Unlock()
	}
}

// resetPeak makes the next sample call onPeak: a new step's peaks are its
// own.
func (m *memSampler) resetPeak() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trigger = 0
}

// Stop ends the sampling and returns the peaks.
func (m *memSampler) Stop() (anon, file int64) {
	close(m.stop)
	m.done.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.anon, m.file
}

// procStatus reads the kB fields of /proc/<pid>/status, in bytes.
func procStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v, isKB := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !isKB {
			continue
		}
		if kb, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[key] = kb * 1024
		}
	}
	return out, nil
}

// peakRSS reads VmHWM, the process's peak resident set size.
func peakRSS(pid int) (int64, error) {
	st, err := procStatus(pid)
	if err != nil {
		return 0, fmt.Errorf("reading the CCM's peak RSS: %w", err)
	}
	hwm, ok := st["VmHWM"]
	if !ok {
		return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
	}
	return hwm, nil
}
