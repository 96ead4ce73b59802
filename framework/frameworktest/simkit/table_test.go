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
