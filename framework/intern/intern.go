// Package intern lets a provider keep one copy of lists that many cloud
// objects hold alike.
//
// At scale, the largest thing a CCM holds is often the same list many
// times over: a thousand load balancers of one cluster each list the same
// five thousand nodes as their members, and the shared list of load
// balancers holds a million IDs that are five thousand. Passed through
// Slices.Of when they are decoded, equal lists share one backing array,
// and the copies the decoder made are garbage at once.
//
// The table holds its lists weakly: a list nothing else holds any more is
// collected as if it had never been interned, and its entry goes at a
// later Of. So a provider interns what it keeps without managing the
// table's lifetime, and a table per client (not a global) costs nothing
// when the lists it saw are gone.
package intern

import (
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"
	"weak"
)

// Slices interns slices of T. Its zero value is ready to use; it is safe
// for concurrent use and must not be copied after first use.
type Slices[T comparable] struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64][]entry[T]
	// n counts the entries; sweepAt is n when the next Of drops the
	// entries of every collected list, not just its own hash's.
	n, sweepAt int
}

// entry is one interned list: a weak pointer to its first element and its
// length.
type entry[T comparable] struct {
	first weak.Pointer[T]
	n     int
}

// minSweep is the table size below which no full sweep is made.
const minSweep = 64

// Of returns a slice equal to s (same elements, same order) that shares
// its backing array with every equal slice Of has returned and that is
// still in use; the first time, a copy of s. An empty s is returned as it
// is.
//
// What Of returns is shared: it must never be modified in place (no
// sort, no element assignment). Its capacity is its length, so append
// copies it. s itself is not kept, and the caller may reuse it.
func (t *Slices[T]) Of(s []T) []T {
	if len(s) == 0 {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries, t.seed = map[uint64][]entry[T]{}, maphash.MakeSeed()
	}
	key := t.hash(s)
	bucket := t.entries[key]
	live := bucket[:0]
	var found []T
	for _, e := range bucket {
		p := e.first.Value()
		if p == nil {
			t.n--
			continue
		}
		live = append(live, e)
		if c := unsafe.Slice(p, e.n); found == nil && slices.Equal(c, s) {
			found = c
		}
	}
	clear(bucket[len(live):]) // the weak pointers of collected lists
	if found == nil {
		found = make([]T, len(s))
		copy(found, s)
		live = append(live, entry[T]{first: weak.Make(&found[0]), n: len(found)})
		t.n++
	}
	t.entries[key] = live
	if t.n >= t.sweepAt {
		t.sweep()
	}
	return found
}

// Len returns how many lists the table holds, counting those collected
// since its last sweep.
func (t *Slices[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// sweep drops the entries of collected lists, and sets the next sweep at
// twice the entries left, so that sweeps cost O(1) per Of over time.
func (t *Slices[T]) sweep() {
	for key, bucket := range t.entries {
		live := bucket[:0]
		for _, e := range bucket {
			if e.first.Value() != nil {
				live = append(live, e)
			}
		}
		clear(bucket[len(live):])
		if len(live) == 0 {
			delete(t.entries, key)
		} else {
			t.entries[key] = live
		}
	}
	t.n = 0
	for _, bucket := range t.entries {
		t.n += len(bucket)
	}
	t.sweepAt = max(2*t.n, minSweep)
}

func (t *Slices[T]) hash(s []T) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	for _, v := range s {
		maphash.WriteComparable(&h, v)
	}
	return h.Sum64()
}
