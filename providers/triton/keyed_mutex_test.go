package triton

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// size is how many keys are held or waited for.
func (k *keyedMutex) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

// TestKeyedMutexExclusion: many goroutines locking a few keys never hold
// one key together. Each key guards a plain counter (a data race the race
// detector reports, were the lock not exclusive) and an atomic count of
// its holders, which must never exceed one; every increment is kept, and
// no entry is left once all have unlocked.
func TestKeyedMutexExclusion(t *testing.T) {
	const keys, workers, rounds = 4, 16, 200
	var k keyedMutex
	counters := make([]int, keys)
	holders := make([]atomic.Int32, keys)
	var overlaps atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				i := (w + r) % keys
				unlock := k.lock(fmt.Sprint("machine-", i))
				if holders[i].Add(1) != 1 {
					overlaps.Add(1)
				}
				counters[i]++
				if r%16 == 0 {
					time.Sleep(time.Microsecond) // let the others queue up
				}
				holders[i].Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times two goroutines held one key", n)
	}
	total := 0
	for _, c := range counters {
		total += c
	}
	if total != workers*rounds {
		t.Errorf("%d increments kept, want %d", total, workers*rounds)
	}
	if n := k.size(); n != 0 {
		t.Errorf("%d entries left after every unlock, want none", n)
	}
}

// TestKeyedMutexBounded: an entry lives while its key is held or waited
// for, and goes with the last unlock, so machines coming and going leave
// nothing behind.
func TestKeyedMutexBounded(t *testing.T) {
	var k keyedMutex
	for i := range 1000 {
		k.lock(fmt.Sprint("gone-", i))()
	}
	if n := k.size(); n != 0 {
		t.Fatalf("%d entries after 1000 machines came and went, want none", n)
	}

	unlockA := k.lock("a")
	unlockB := k.lock("b")
	if n := k.size(); n != 2 {
		t.Errorf("%d entries with two keys held, want 2", n)
	}
	// A second caller of a waits; a's entry stays for it when the holder
	// unlocks.
	acquired := make(chan func())
	go func() { acquired <- k.lock("a") }()
	waitFor(t, "the second caller of a to wait", func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.entries["a"] != nil && k.entries["a"].refs == 2
	})
	unlockA()
	unlockA2 := <-acquired
	if n := k.size(); n != 2 {
		t.Errorf("%d entries with a held again and b held, want 2", n)
	}
	unlockA2()
	unlockB()
	if n := k.size(); n != 0 {
		t.Errorf("%d entries after every unlock, want none", n)
	}
}

// TestKeyedMutexKeys: a held key blocks its own callers until it is
// unlocked, and no other key's.
func TestKeyedMutexKeys(t *testing.T) {
	var k keyedMutex
	unlock := k.lock("a")

	other := make(chan struct{})
	go func() {
		k.lock("b")()
		close(other)
	}()
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("locking b waited for a")
	}

	same := make(chan struct{})
	go func() {
		k.lock("a")()
		close(same)
	}()
	select {
	case <-same:
		t.Fatal("a was locked twice at once")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	select {
	case <-same:
	case <-time.After(10 * time.Second):
		t.Fatal("the second caller of a never got it after the unlock")
	}
	if n := k.size(); n != 0 {
		t.Errorf("%d entries after every unlock, want none", n)
	}
}
