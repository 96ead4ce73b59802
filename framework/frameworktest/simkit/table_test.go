package simkit

import (
	"slices"
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
