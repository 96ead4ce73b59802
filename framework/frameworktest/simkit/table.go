package simkit

import (
	"iter"
	"slices"
)

// Table holds one kind of a simulated cloud's resources by ID, in creation
// order, as lists answer them. A grouped table also indexes them by a
// parent ID that never changes (a member's pool, a listener's load
// balancer), so children are found without scanning every row: at bench
// scale OpenStack's members table holds 5 million. Put, Get and Del cost
// the same whatever the size (a deleted ID leaves a hole in the order,
// closed once holes are half of it): deleting a pool of 5,000 members
// from 5 million is 5,000 steps, not 5,000 copies of the order. IDs are
// not empty. It is not safe for concurrent use: the simulator's lock
// guards it.
type Table[T any] struct {
	m     map[string]slot[T]
	order idList
	// group, when set, names the parent of a resource; groups holds the
	// IDs of each parent's resources, in creation order.
	group  func(*T) string
	groups map[string]*idList
}

// slot is a resource and where its ID is in the table's order and in its
// group's.
type slot[T any] struct {
	v         *T
	pos, gpos int
}

// idList is IDs in creation order, with "" where one was deleted.
type idList struct {
	list  []string
	holes int
}

func (o *idList) add(id string) int {
	o.list = append(o.list, id)
	return len(o.list) - 1
}

// del deletes the ID at i, and reports whether the list was compacted
// (positions changed).
func (o *idList) del(i int) bool {
	o.list[i] = ""
	o.holes++
	if o.holes < 64 || o.holes*2 < len(o.list) {
		return false
	}
	o.list = slices.DeleteFunc(o.list, func(id string) bool { return id == "" })
	o.holes = 0
	return true
}

func (o *idList) live() int { return len(o.list) - o.holes }

// NewTable returns an empty table.
func NewTable[T any]() *Table[T] { return &Table[T]{m: map[string]slot[T]{}} }

// NewGroupedTable returns an empty table that also indexes its resources
// by the parent group names (In).
func NewGroupedTable[T any](group func(*T) string) *Table[T] {
	return &Table[T]{m: map[string]slot[T]{}, group: group, groups: map[string]*idList{}}
}

// Get returns the resource with the ID.
func (t *Table[T]) Get(id string) (*T, bool) {
	s, ok := t.m[id]
	return s.v, ok
}

// Put stores v under id: a new ID goes last, a known one keeps its place.
// It panics on an empty ID, which the order lists use as a hole: a
// simulator that stored one would hold a row that no listing shows.
func (t *Table[T]) Put(id string, v *T) {
	if id == "" {
		panic("simkit: Table.Put with an empty ID")
	}
	if s, ok := t.m[id]; ok {
		s.v = v
		t.m[id] = s
		return
	}
	s := slot[T]{v: v, pos: t.order.add(id)}
	if t.group != nil {
		g := t.groups[t.group(v)]
		if g == nil {
			g = &idList{}
			t.groups[t.group(v)] = g
		}
		s.gpos = g.add(id)
	}
	t.m[id] = s
}

// Del removes the resource with the ID, if there is one.
func (t *Table[T]) Del(id string) {
	s, ok := t.m[id]
	if !ok {
		return
	}
	delete(t.m, id)
	if t.order.del(s.pos) {
		for i, id := range t.order.list {
			s := t.m[id]
			s.pos = i
			t.m[id] = s
		}
	}
	if t.group == nil {
		return
	}
	name := t.group(s.v)
	g := t.groups[name]
	switch {
	case g.live() == 1:
		delete(t.groups, name)
	case g.del(s.gpos):
		for i, id := range g.list {
			s := t.m[id]
			s.gpos = i
			t.m[id] = s
		}
	}
}

// All returns the resources, oldest first.
func (t *Table[T]) All() []*T { return t.values(&t.order) }

// Values yields the resources, oldest first, without copying them out: a
// loop that stops early (the first few hosts of 5,000) costs only what it
// reads. The table must not change during the loop.
func (t *Table[T]) Values() iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for _, id := range t.order.list {
			if id != "" && !yield(t.m[id].v) {
				return
			}
		}
	}
}

// In returns the resources of a grouped table whose parent is group,
// oldest first.
func (t *Table[T]) In(group string) []*T {
	g := t.groups[group]
	if g == nil {
		return []*T{}
	}
	return t.values(g)
}

// Find returns the oldest resource that match accepts.
func (t *Table[T]) Find(match func(*T) bool) (*T, bool) {
	for v := range t.Values() {
		if match(v) {
			return v, true
		}
	}
	return nil, false
}

// Len is the number of resources.
func (t *Table[T]) Len() int { return len(t.m) }

func (t *Table[T]) values(o *idList) []*T {
	out := make([]*T, 0, o.live())
	for _, id := range o.list {
		if id != "" {
			out = append(out, t.m[id].v)
		}
	}
	return out
}

// CloneAll copies every resource of in (a Table's All...) with clone, for
// a simulator's State: never nil, so that an empty list is [] in JSON.
func CloneAll[T, U any](in []*T, clone func(*T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, clone(v))
	}
	return out
}

// CloneOf copies the resource of t with the ID with clone, for a
// simulator's getter of one resource.
func CloneOf[T, U any](t *Table[T], id string, clone func(*T) U) (U, bool) {
	v, ok := t.Get(id)
	if !ok {
		return *new(U), false
	}
	return clone(v), true
}
