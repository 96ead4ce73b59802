package intern

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

func ids(n int, prefix string) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s-%06d", prefix, i)
	}
	return s
}

func TestEqualListsShareOneArray(t *testing.T) {
	var tab Slices[string]
	a := tab.Of(ids(100, "srv"))
	b := tab.Of(ids(100, "srv"))
	if &a[0] != &b[0] {
		t.Fatal("two equal lists do not share their backing array")
	}
	if !slices.Equal(a, ids(100, "srv")) {
		t.Fatalf("Of changed the list: %v", a[:3])
	}
	c := tab.Of(ids(99, "srv"))
	d := tab.Of(slices.Concat(ids(99, "srv"), []string{"other"}))
	for _, x := range [][]string{c, d} {
		if &x[0] == &a[0] {
			t.Fatal("a different list shares the array of another")
		}
	}
	// Order matters: a reordered list is another list.
	r := slices.Clone(ids(100, "srv"))
	slices.Reverse(r)
	if got := tab.Of(r); &got[0] == &a[0] || got[0] != r[0] {
		t.Fatalf("a reordered list was answered with the first: %v", got[:2])
	}
	if n := tab.Len(); n != 4 {
		t.Fatalf("the table holds %d lists, want 4", n)
	}
}

func TestOfDoesNotKeepItsArgument(t *testing.T) {
	var tab Slices[int]
	s := []int{1, 2, 3}
	got := tab.Of(s)
	s[0] = 9
	if got[0] != 1 || tab.Of([]int{1, 2, 3})[0] != 1 {
		t.Fatal("the interned list follows a change to the caller's slice")
	}
}

func TestAppendCopies(t *testing.T) {
	var tab Slices[int]
	a := tab.Of([]int{1, 2, 3})
	if cap(a) != len(a) {
		t.Fatalf("cap %d, len %d: an append would write into the shared array", cap(a), len(a))
	}
	_ = append(a, 4)
	if b := tab.Of([]int{1, 2, 3}); len(b) != 3 || &b[0] != &a[0] {
		t.Fatal("appending to an interned list changed the table")
	}
}

func TestEmpty(t *testing.T) {
	var tab Slices[string]
	if got := tab.Of(nil); got != nil {
		t.Fatalf("Of(nil) = %v", got)
	}
	if got := tab.Of([]string{}); got == nil || len(got) != 0 {
		t.Fatalf("Of([]string{}) = %#v: an empty list must stay empty, not nil", got)
	}
	if tab.Len() != 0 {
		t.Fatal("empty lists are held")
	}
}

// A list nothing holds any more leaves the table: the table never keeps
// what the provider dropped.
func TestCollectedListsLeave(t *testing.T) {
	var tab Slices[string]
	for i := range 1000 {
		tab.Of(ids(50, fmt.Sprint("gone", i)))
	}
	kept := tab.Of(ids(50, "kept"))
	runtime.GC()
	// The table sweeps when it has doubled since its last sweep: more
	// lists, each dropped at once, get it there.
	for i := 0; i < 2000 && tab.Len() >= 1000; i++ {
		tab.Of(ids(50, fmt.Sprint("probe", i)))
	}
	if n := tab.Len(); n >= 1000 {
		t.Fatalf("the table still holds %d lists after the collector ran", n)
	}
	if again := tab.Of(ids(50, "kept")); &again[0] != &kept[0] {
		t.Fatal("a list still in use lost its entry")
	}
	runtime.KeepAlive(kept)
}

func TestConcurrent(t *testing.T) {
	var tab Slices[string]
	var wg sync.WaitGroup
	got := make([][]string, 8)
	for w := range got {
		wg.Go(func() {
			for range 100 {
				got[w] = tab.Of(ids(200, "node"))
			}
		})
	}
	wg.Wait()
	for _, g := range got[1:] {
		if &g[0] != &got[0][0] {
			t.Fatal("concurrent callers got different arrays for one list")
		}
	}
}

// BenchmarkMembers is a thousand load balancers of one cluster, each
// listing the same 5,000 nodes, as a list of them decodes: what the kept
// lists cost with and without interning (B/op is what stays allocated per
// thousand; kept-MiB what is live after a GC).
func BenchmarkMembers(b *testing.B) {
	const lbs, nodes = 1000, 5000
	for _, interned := range []bool{false, true} {
		b.Run(fmt.Sprintf("interned=%v", interned), func(b *testing.B) {
			var live float64
			for range b.N {
				var tab Slices[string]
				kept := make([][]string, lbs)
				for i := range kept {
					s := ids(nodes, "i") // as the decoder would make it
					if interned {
						s = tab.Of(s)
					}
					kept[i] = s
				}
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				live = float64(m.HeapAlloc) / (1 << 20)
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(live, "live-MiB")
		})
	}
}

// BenchmarkOf is the cost of interning one list of 5,000 node IDs that
// the table holds already: what each load balancer of a list costs.
func BenchmarkOf(b *testing.B) {
	var tab Slices[string]
	s := ids(5000, "i")
	kept := tab.Of(s)
	b.ResetTimer()
	for range b.N {
		tab.Of(s)
	}
	runtime.KeepAlive(kept)
}
