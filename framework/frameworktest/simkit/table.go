package simkit

import (
	"iter"
	"slices"
)

// Table holds one kind of a simulated cloud's resources by ID, in creation
// order, as lists answer them. A grouped table also indexes them by a
// parent ID that never changes (a member's pool, a listener's load
// balancer), so children are found without scanning every row: at bench
// scale OpenStack's members table holds 200,000. It is not safe for
// concurrent use: the simulator's lock guards it.
type Table[T any] struct {
	m     map[string]*T
	order []string
	// group, when set, names the parent of a resource; groups holds the
	// IDs of each parent's resources, in creation order.
	group  func(*T) string
	groups map[string][]string
}

// NewTable returns an empty table.
func NewTable[T any]() *Table[T] { return &Table[T]{m: map[string]*T{}} }

// NewGroupedTable returns an empty table that also indexes its resources
// by the parent group names (In).
func NewGroupedTable[T any](group func(*T) string) *Table[T] {
	return &Table[T]{m: map[string]*T{}, group: group, groups: map[string][]string{}}
}

// Get returns the resource with the ID.
func (t *Table[T]) Get(id string) (*T, bool) {
	v, ok := t.m[id]
	return v, ok
}

// Put stores v under id: a new ID goes last, a known one keeps its place.
func (t *Table[T]) Put(id string, v *T) {
	if _, ok := t.m[id]; !ok {
		t.order = append(t.order, id)
		if t.group != nil {
			g := t.group(v)
			t.groups[g] = append(t.groups[g], id)
		}
	}
	t.m[id] = v
}

// Del removes the resource with the ID, if there is one.
func (t *Table[T]) Del(id string) {
	v, ok := t.m[id]
	if !ok {
		return
	}
	delete(t.m, id)
	t.order = deleteID(t.order, id)
	if t.group != nil {
		g := t.group(v)
		if t.groups[g] = deleteID(t.groups[g], id); len(t.groups[g]) == 0 {
			delete(t.groups, g)
		}
	}
}

// All returns the resources, oldest first.
func (t *Table[T]) All() []*T { return t.values(t.order) }

// Values yields the resources, oldest first, without copying them out: a
// loop that stops early (the first few hosts of 5,000) costs only what it
// reads. The table must not change during the loop.
func (t *Table[T]) Values() iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for _, id := range t.order {
			if !yield(t.m[id]) {
				return
			}
		}
	}
}

// In returns the resources of a grouped table whose parent is group,
// oldest first.
func (t *Table[T]) In(group string) []*T { return t.values(t.groups[group]) }

// Find returns the oldest resource that match accepts.
func (t *Table[T]) Find(match func(*T) bool) (*T, bool) {
	for _, id := range t.order {
		if v := t.m[id]; match(v) {
			return v, true
		}
	}
	return nil, false
}

// Len is the number of resources.
func (t *Table[T]) Len() int { return len(t.m) }

func (t *Table[T]) values(ids []string) []*T {
	out := make([]*T, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.m[id])
	}
	return out
}

func deleteID(ids []string, id string) []string {
	if i := slices.Index(ids, id); i >= 0 {
		return slices.Delete(ids, i, i+1)
	}
	return ids
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
