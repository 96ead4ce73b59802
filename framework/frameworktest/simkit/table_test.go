package simkit

import (
	"slices"
	"strconv"
	"testing"
)

type row struct{ ID, Parent string }

func ids(rows []*row) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

func TestTableKeepsCreationOrderAndGroups(t *testing.T) {
	tb := NewGroupedTable(func(r *row) string { return r.Parent })
	for _, r := range []*row{{"c", "p1"}, {"a", "p2"}, {"b", "p1"}} {
		tb.Put(r.ID, r)
	}
	tb.Put("c", &row{"c", "p1"}) // a known ID keeps its place
	if got := ids(tb.All()); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("All = %v, want creation order c a b", got)
	}
	if got := ids(tb.In("p1")); !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("In(p1) = %v, want c b", got)
	}
	tb.Del("c")
	tb.Del("missing")
	if _, ok := tb.Get("c"); ok || tb.Len() != 2 {
		t.Errorf("after Del(c): Get(c) found = %v, Len = %d; want gone, 2", ok, tb.Len())
	}
	if got := ids(tb.In("p1")); !slices.Equal(got, []string{"b"}) {
		t.Errorf("In(p1) after Del = %v, want b", got)
	}
	tb.Del("b")
	if got := tb.In("p1"); len(got) != 0 {
		t.Errorf("In(p1) of an emptied group = %v, want none", ids(got))
	}
}

func TestTableFindAndClones(t *testing.T) {
	tb := NewTable[row]()
	for _, r := range []*row{{"c", "p1"}, {"a", "p2"}, {"b", "p1"}} {
		tb.Put(r.ID, r)
	}
	if r, ok := tb.Find(func(r *row) bool { return r.Parent == "p1" }); !ok || r.ID != "c" {
		t.Errorf("Find(p1) = %v, %v; want the oldest, c", r, ok)
	}
	if _, ok := tb.Find(func(r *row) bool { return r.Parent == "p3" }); ok {
		t.Error("Find(p3) found one")
	}
	parent := func(r *row) string { return r.Parent }
	if p, ok := CloneOf(tb, "a", parent); !ok || p != "p2" {
		t.Errorf("CloneOf(a) = %q, %v", p, ok)
	}
	if p, ok := CloneOf(tb, "z", parent); ok || p != "" {
		t.Errorf("CloneOf(z) = %q, %v", p, ok)
	}
	if got := CloneAll(tb.All(), parent); !slices.Equal(got, []string{"p1", "p2", "p1"}) {
		t.Errorf("CloneAll = %v", got)
	}
	if got := CloneAll(NewTable[row]().All(), parent); got == nil {
		t.Error("CloneAll of none is nil, want empty")
	}
}

// TestTableDeletesKeepOrder: deletes, enough of them to compact the order
// and a group's more than once, leave the rest in creation order, and an
// ID put again after its delete goes last.
func TestTableDeletesKeepOrder(t *testing.T) {
	tb := NewGroupedTable(func(r *row) string { return r.Parent })
	var want []string
	for i := range 1000 {
		id := strconv.Itoa(i)
		tb.Put(id, &row{id, "p" + strconv.Itoa(i%2)})
		want = append(want, id)
	}
	for i := 0; i < 1000; i += 3 {
		tb.Del(strconv.Itoa(i))
	}
	for i := 1; i < 1000; i += 3 {
		tb.Del(strconv.Itoa(i))
	}
	tb.Put("1", &row{"1", "p1"})
	want = slices.DeleteFunc(want, func(id string) bool { n, _ := strconv.Atoi(id); return n%3 != 2 })
	want = append(want, "1")
	if got := ids(tb.All()); !slices.Equal(got, want) || tb.Len() != len(want) {
		t.Errorf("All = %d IDs, want %d (%v...)", len(got), len(want), got[:5])
	}
	var p1 []string
	for _, id := range want {
		if n, _ := strconv.Atoi(id); n%2 == 1 {
			p1 = append(p1, id)
		}
	}
	if got := ids(tb.In("p1")); !slices.Equal(got, p1) {
		t.Errorf("In(p1) = %d IDs, want %d", len(got), len(p1))
	}
	for _, id := range want {
		tb.Del(id)
	}
	if tb.Len() != 0 || len(tb.All()) != 0 || len(tb.In("p1")) != 0 || len(tb.groups) != 0 {
		t.Errorf("after deleting all: Len %d, All %d, groups %d", tb.Len(), len(tb.All()), len(tb.groups))
	}
	var found []string
	for v := range tb.Values() {
		found = append(found, v.ID)
	}
	if len(found) != 0 {
		t.Errorf("Values after deleting all: %v", found)
	}
}

// BenchmarkTableDeleteGroup deletes a group of 5,000 rows from a table of
// 500,000, as the OpenStack simulator deletes a pool's members.
func BenchmarkTableDeleteGroup(b *testing.B) {
	tb := NewGroupedTable(func(r *row) string { return r.Parent })
	for i := range 500_000 {
		id := strconv.Itoa(i)
		tb.Put(id, &row{id, "p" + strconv.Itoa(i/5000)})
	}
	next := 500_000
	for b.Loop() {
		g := tb.In("p0")
		for _, r := range g {
			tb.Del(r.ID)
		}
		for range g { // the same count back, in a group deleted next
			id := strconv.Itoa(next)
			tb.Put(id, &row{id, "p0"})
			next++
		}
	}
}

func TestTablePutEmptyIDPanics(t *testing.T) {
	tab := NewTable[row]()
	defer func() {
		if recover() == nil {
			t.Fatal("Put with an empty ID did not panic")
		}
		if tab.Len() != 0 {
			t.Fatalf("the table holds %d rows after a refused Put", tab.Len())
		}
	}()
	tab.Put("", &row{})
}
